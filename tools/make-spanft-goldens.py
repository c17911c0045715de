#!/usr/bin/python3
"""Golden values for Span Fine-tuning's span CNN (fixtures/span-ft/golden.json).

Re-implements, in PyTorch, the reference's modules (BAORONGZHOU/span-fine-tuning at
bca4358f101524a0a81e0d4cdb007e517d43f031, modeling.py): CNN_conv1d (Conv1d H->H kernel 3
padding 0, ReLU, max-pool over every output position, dropout), ChunkLevelFeatureEncoderMultiCnn
(the chunk grid [B, max_chunk_number, max_chunk_len, H] filled from chunk lengths laid from
position 0, chunks cut at max_chunk_len, then CNN_conv1d over each chunk's slots and again over
the chunks) and ChunkLevelFeatureEncoderNERCNN with NER_CNN (Conv1d padding 1, ReLU, dropout, no
pool; each token gets its own slot's output, 0 outside every chunk). The reference file imports
transformers and pytorch_pretrained_bert, which Debian's torch 1.13 does not have, so its
definitions are written out here; dropout is off (eval), as the forward compared.

Writes forward outputs and gradients for fixed seeded inputs and weights, with padding 0 (the
reference) and padding 1 (span's option) for the sentence level.
Run: /usr/bin/python3 tools/make-spanft-goldens.py  (writes fixtures/span-ft/golden.json)
"""
import json
import os

import torch
import torch.nn.functional as F

B, T, H, R, L = 2, 12, 4, 7, 4
# chunk lengths as the reference's features carry them: [CLS]=1, the sentences' spans, [SEP]=1, zeros
CHUNK_LENS = [
    [1, 2, 5, 1, 1, 2, 0],  # the 5-token chunk is cut to L = 4 slots; tokens 12.. none
    [1, 1, 3, 1, 0, 0, 0],  # short row: empty chunks and tokens 6..11 outside every chunk
]


def chunk_grid(h, chunk_lens, r, l):
    """The [B·r, l, H] grid (zeros where no token) and, per (b, t), the slot holding token t."""
    grid = torch.zeros(h.shape[0], r, l, h.shape[2], dtype=h.dtype)
    slot_of = {}
    for b, lens in enumerate(chunk_lens):
        start = 0
        for i, n in enumerate(lens):
            for j in range(min(n, l)):
                grid[b, i, j] = h[b, start + j]
                slot_of[(b, start + j)] = (i, j)
            start += n
    return grid, slot_of


def conv_relu_maxpool(x, w, bias, padding):
    """CNN_conv1d.forward: [N, W, H] -> Conv1d -> ReLU -> max over all output positions -> [N, H]."""
    y = F.relu(F.conv1d(x.transpose(1, 2), w, bias, padding=padding))  # [N, H, W']
    return F.max_pool1d(y, kernel_size=y.shape[-1]).squeeze(-1)


def sentence_level(h, p, padding):
    """ChunkLevelFeatureEncoderMultiCnn.forward: s [B, H]."""
    grid, _ = chunk_grid(h, CHUNK_LENS, R, L)
    c = conv_relu_maxpool(grid.view(-1, L, H), p['tw'], p['tb'], padding).view(B, R, H)
    return conv_relu_maxpool(c, p['sw'], p['sb'], padding)


def token_level(h, p):
    """ChunkLevelFeatureEncoderNERCNN.forward with NER_CNN: [B, T, H]."""
    grid, slot_of = chunk_grid(h, CHUNK_LENS, R, L)
    y = F.relu(F.conv1d(grid.view(-1, L, H).transpose(1, 2), p['tw'], p['tb'], padding=1)).transpose(1, 2).reshape(B, R, L, H)
    out = torch.zeros_like(h)
    for (b, t), (i, j) in slot_of.items():
        out[b, t] = y[b, i, j]
    return out


def run(fn, seed):
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(B, T, H, generator=g, dtype=torch.float64, requires_grad=True)
    p = {k: (torch.randn(*s, generator=g, dtype=torch.float64) * 0.5).requires_grad_() for k, s in
         [('tw', (H, H, 3)), ('tb', (H,)), ('sw', (H, H, 3)), ('sb', (H,))]}
    out = fn(h, p)
    weight = torch.randn(*out.shape, generator=g, dtype=torch.float64)  # the loss sum(out * weight)
    (out * weight).sum().backward()
    flat = lambda t: [round(float(v), 12) for v in t.detach().reshape(-1)]
    return {'h': flat(h), 'params': {k: flat(v) for k, v in p.items()}, 'out': flat(out), 'out_shape': list(out.shape),
            'loss_weight': flat(weight), 'grad_h': flat(h.grad), 'grad_params': {k: flat(v.grad) if v.grad is not None else None for k, v in p.items()}}


def main():
    golden = {
        'source': 'BAORONGZHOU/span-fine-tuning@bca4358f101524a0a81e0d4cdb007e517d43f031 modeling.py, re-implemented by tools/make-spanft-goldens.py',
        'B': B, 'T': T, 'H': H, 'r': R, 'l': L, 'chunk_lens': CHUNK_LENS,
        'sentence_padding0': run(lambda h, p: sentence_level(h, p, 0), 1),
        'sentence_padding1': run(lambda h, p: sentence_level(h, p, 1), 2),
        'token': run(token_level, 3),
    }
    out = os.path.join(os.path.dirname(__file__), '..', 'fixtures', 'span-ft', 'golden.json')
    with open(out, 'w') as f:
        json.dump(golden, f)
        f.write('\n')


if __name__ == '__main__':
    main()
