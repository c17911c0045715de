#!/usr/bin/python3
"""Golden outputs for span's model, from an independent PyTorch implementation.

Run with Debian's Python, which has torch (the pyenv `python3` on PATH does not):

    /usr/bin/python3 tools/golden_model.py

It writes into fixtures/golden/:
  weights.safetensors     the initial weights (Hugging Face BERT names, F32)
  batch.json              the config, the optimiser settings and one batch of masked examples
  expected.json           MLM/SBO/NSP logits, the losses and the gradient norm
  grads.safetensors       the gradients of that batch's loss after clipping to global norm 1.0
  after_step.safetensors  the weights after ONE AdamW step (lr warm-up, clipping 1.0, wd 0.01)

The model is plain nn.Module code in the style of Hugging Face's modeling_bert.py and the
SpanBERT reference (pretraining/fairseq/models/pair_bert.py, BertPairTargetPredictionHead),
written without looking at the TypeScript: post-LN encoder, erf GeLU, MLM head tied to the
word embeddings, the SBO head computed the reference's way (every pair predicts all
max_targets positions, padded targets ignored), NSP on the tanh pooler. Dropout is 0.
"""
import json
import math
import os
import struct

import torch
import torch.nn.functional as F
from torch import nn

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'golden')

CONFIG = {
    'model_type': 'bert', 'vocab_size': 50, 'hidden_size': 16, 'num_hidden_layers': 2,
    'num_attention_heads': 2, 'intermediate_size': 32, 'hidden_act': 'gelu',
    'hidden_dropout_prob': 0.0, 'attention_probs_dropout_prob': 0.0,
    'max_position_embeddings': 32, 'type_vocab_size': 2, 'initializer_range': 0.02,
    'layer_norm_eps': 1e-12, 'objectives': ['mlm', 'sbo', 'nsp'],
    'sbo': {'position_embedding_size': 8, 'max_targets': 4},
}
OPTIM = {'peak_lr': 0.01, 'warmup': 4, 'total': 20, 'step': 1, 'beta1': 0.9, 'beta2': 0.999,
         'eps': 1e-8, 'weight_decay': 0.01, 'max_grad_norm': 1.0}
PAD = 0

# [CLS] = 1, [SEP] = 2, [MASK] = 3; spans cover: one touching [CLS], one touching [SEP],
# one longer than max_targets, several per example, random and kept tokens.
EXAMPLES = [
    {'ids': [1, 11, 3, 3, 14, 15, 3, 17, 18, 19, 20, 2],
     'targets': [[2, 12], [3, 13], [6, 16]],
     'spans': [[2, 3, 'mask'], [6, 6, 'mask']],
     'segments': [0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1], 'next': True},
    {'ids': [1, 3, 22, 23, 24, 25, 3, 3, 2],
     'targets': [[1, 21], [6, 26], [7, 27]],
     'spans': [[1, 1, 'mask'], [6, 7, 'mask']],
     'segments': [0, 0, 0, 0, 1, 1, 1, 1, 1], 'next': False},
    {'ids': [1, 31, 32, 3, 3, 44, 3, 3, 33, 39, 40, 41, 42, 3, 43, 2],
     'targets': [[3, 34], [4, 35], [5, 36], [6, 37], [7, 38], [8, 33], [13, 45]],
     'spans': [[3, 8, 'mask'], [13, 13, 'mask']],
     'segments': [0] * 16, 'next': True},
]


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c['vocab_size'], c['hidden_size'])
        self.position_embeddings = nn.Embedding(c['max_position_embeddings'], c['hidden_size'])
        self.token_type_embeddings = nn.Embedding(c['type_vocab_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, ids, types):
        pos = torch.arange(ids.size(1)).unsqueeze(0).expand_as(ids)
        return self.LayerNorm(self.word_embeddings(ids) + self.position_embeddings(pos) + self.token_type_embeddings(types))


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c['num_attention_heads']
        self.size = c['hidden_size'] // self.heads
        self.query = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.key = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.value = nn.Linear(c['hidden_size'], c['hidden_size'])

    def split(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.size).permute(0, 2, 1, 3)

    def forward(self, x, ext_mask):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.size) + ext_mask
        ctx = torch.softmax(scores, dim=-1) @ v
        b, _, t, _ = ctx.shape
        return ctx.permute(0, 2, 1, 3).reshape(b, t, -1)


class DenseNorm(nn.Module):
    """dense, residual, LayerNorm (BertSelfOutput / BertOutput)."""

    def __init__(self, c, n_in):
        super().__init__()
        self.dense = nn.Linear(n_in, c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, x, residual):
        return self.LayerNorm(self.dense(x) + residual)


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttention(c)
        self.output = DenseNorm(c, c['hidden_size'])

    def forward(self, x, ext_mask):
        return self.output(self.self(x, ext_mask), x)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['intermediate_size'])

    def forward(self, x):
        return gelu(self.dense(x))


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseNorm(c, c['intermediate_size'])

    def forward(self, x, ext_mask):
        a = self.attention(x, ext_mask)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c['num_hidden_layers'])])

    def forward(self, x, ext_mask):
        for layer in self.layer:
            x = layer(x, ext_mask)
        return x


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])

    def forward(self, h):
        return torch.tanh(self.dense(h[:, 0]))


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.pooler = Pooler(c)

    def forward(self, ids, types, mask):
        ext = (1.0 - mask[:, None, None, :].float()) * -10000.0
        h = self.encoder(self.embeddings(ids, types), ext)
        return h, self.pooler(h)


class Transform(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c['hidden_size'], c['hidden_size'])
        self.LayerNorm = nn.LayerNorm(c['hidden_size'], eps=c['layer_norm_eps'])

    def forward(self, x):
        return self.LayerNorm(gelu(self.dense(x)))


class LMPrediction(nn.Module):
    def __init__(self, c, emb):
        super().__init__()
        self.transform = Transform(c)
        self.decoder = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.decoder.weight = emb.weight
        self.bias = nn.Parameter(torch.zeros(c['vocab_size']))

    def forward(self, x):
        return self.decoder(self.transform(x)) + self.bias


class MLPWithLayerNorm(nn.Module):
    def __init__(self, c, n_in):
        super().__init__()
        h = c['hidden_size']
        self.linear1 = nn.Linear(n_in, h)
        self.layer_norm1 = nn.LayerNorm(h, eps=c['layer_norm_eps'])
        self.linear2 = nn.Linear(h, h)
        self.layer_norm2 = nn.LayerNorm(h, eps=c['layer_norm_eps'])

    def forward(self, x):
        return self.layer_norm2(gelu(self.linear2(self.layer_norm1(gelu(self.linear1(x))))))


class PairTargetPrediction(nn.Module):
    """The reference's BertPairTargetPredictionHead: every pair predicts max_targets positions."""

    def __init__(self, c, emb):
        super().__init__()
        self.max_targets = c['sbo']['max_targets']
        p = c['sbo']['position_embedding_size']
        self.position_embeddings = nn.Embedding(self.max_targets, p)
        self.mlp_layer_norm = MLPWithLayerNorm(c, 2 * c['hidden_size'] + p)
        self.decoder = nn.Linear(c['hidden_size'], c['vocab_size'], bias=False)
        self.decoder.weight = emb.weight
        self.bias = nn.Parameter(torch.zeros(c['vocab_size']))

    def forward(self, h, pairs):
        bs, n_pairs, _ = pairs.shape
        dim = h.size(-1)
        left = torch.gather(h, 1, pairs[:, :, 0:1].repeat(1, 1, dim)).reshape(bs * n_pairs, 1, dim)
        right = torch.gather(h, 1, pairs[:, :, 1:2].repeat(1, 1, dim)).reshape(bs * n_pairs, 1, dim)
        pos = self.position_embeddings.weight.unsqueeze(0).repeat(bs * n_pairs, 1, 1)
        x = torch.cat((left.repeat(1, self.max_targets, 1), right.repeat(1, self.max_targets, 1), pos), -1)
        return self.decoder(self.mlp_layer_norm(x)) + self.bias  # [bs·pairs, max_targets, V]


class Heads(nn.Module):
    def __init__(self, c, emb):
        super().__init__()
        self.predictions = LMPrediction(c, emb)
        self.pair_target_predictions = PairTargetPrediction(c, emb)
        self.seq_relationship = nn.Linear(c['hidden_size'], 2)


class PreTraining(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bert = Bert(c)
        self.cls = Heads(c, self.bert.embeddings.word_embeddings)

    def forward(self, batch):
        h, pooled = self.bert(batch['ids'], batch['types'], batch['mask'])
        mlm = self.cls.predictions(h)  # [B, T, V]
        sbo = self.cls.pair_target_predictions(h, batch['pairs'])  # [B·P, M, V]
        nsp = self.cls.seq_relationship(pooled)  # [B, 2]
        return mlm, sbo, nsp


def collate(examples, max_targets):
    """The reference's data layout: lm_target over all positions (-100 elsewhere), pair
    targets [B, P, M] padded with -100, pairs only for spans whose outer boundaries are not
    [CLS]/[SEP] (span_masking, endpoints='external'), targets cut to max_targets."""
    T = max(len(e['ids']) for e in examples)
    B = len(examples)
    ids = torch.full((B, T), PAD, dtype=torch.long)
    types = torch.zeros((B, T), dtype=torch.long)
    mask = torch.zeros((B, T), dtype=torch.long)
    lm_target = torch.full((B, T), -100, dtype=torch.long)
    pairs, pair_targets = [], []
    for b, e in enumerate(examples):
        n = len(e['ids'])
        ids[b, :n] = torch.tensor(e['ids'])
        types[b, :n] = torch.tensor(e['segments'])
        mask[b, :n] = 1
        orig = dict((p, o) for p, o in e['targets'])
        for p, o in e['targets']:
            lm_target[b, p] = o
        ps, ts = [], []
        for s, end, _ in e['spans']:
            if s - 1 >= 1 and end + 1 <= n - 2:
                ps.append([s - 1, end + 1])
                tg = [orig[i] for i in range(s, end + 1)][:max_targets]
                ts.append(tg + [-100] * (max_targets - len(tg)))
        pairs.append(ps)
        pair_targets.append(ts)
    P = max(1, max(len(p) for p in pairs))
    pairs_t = torch.zeros((B, P, 2), dtype=torch.long)
    targets_t = torch.full((B, P, max_targets), -100, dtype=torch.long)
    for b in range(B):
        for j, (pp, tt) in enumerate(zip(pairs[b], pair_targets[b])):
            pairs_t[b, j] = torch.tensor(pp)
            targets_t[b, j] = torch.tensor(tt)
    nxt = torch.tensor([0 if e['next'] else 1 for e in examples])
    return {'ids': ids, 'types': types, 'mask': mask, 'lm_target': lm_target, 'pairs': pairs_t,
            'pair_targets': targets_t, 'next': nxt}


def init_weights(model, seed):
    """Deterministic, far from the trivial init so every parameter matters."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g)
            if 'LayerNorm' in name or 'layer_norm' in name:
                p.copy_(1.0 + 0.2 * noise if name.endswith('weight') else 0.1 * noise)
            elif name.endswith('bias'):
                p.copy_(0.1 * noise)
            else:
                p.copy_(0.3 * noise)


def losses(model, batch):
    mlm, sbo, nsp = model(batch)
    lm_t = batch['lm_target'].view(-1)
    pt = batch['pair_targets'].view(-1)
    n_mlm = int((lm_t != -100).sum())
    n_sbo = int((pt != -100).sum())
    l_mlm = F.cross_entropy(mlm.view(-1, mlm.size(-1)), lm_t, ignore_index=-100, reduction='sum') / n_mlm
    l_sbo = F.cross_entropy(sbo.view(-1, sbo.size(-1)), pt, ignore_index=-100, reduction='sum') / n_sbo
    l_nsp = F.cross_entropy(nsp, batch['next'], reduction='mean')
    return (mlm, sbo, nsp), {'total': l_mlm + l_sbo + l_nsp, 'mlm': l_mlm, 'sbo': l_sbo, 'nsp': l_nsp}


def write_safetensors(path, tensors):
    """The safetensors layout, written by hand (the package is not installed here)."""
    header, blobs, offset = {'__metadata__': {'format': 'pt'}}, [], 0
    for name, t in tensors:
        data = t.detach().contiguous().to(torch.float32).numpy().astype('<f4').tobytes()
        header[name] = {'dtype': 'F32', 'shape': list(t.shape), 'data_offsets': [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    h = json.dumps(header).encode('utf-8')
    h += b' ' * ((8 - len(h) % 8) % 8)
    with open(path, 'wb') as f:
        f.write(struct.pack('<Q', len(h)) + h + b''.join(blobs))


def stored_params(model):
    """HF names, tied decoder weights left out (they are the word embeddings)."""
    return [(n, p) for n, p in model.named_parameters() if not n.endswith('decoder.weight')]


def lr_at(step):
    o = OPTIM
    if step <= o['warmup']:
        return o['peak_lr'] * step / o['warmup']
    return max(0.0, o['peak_lr'] * (o['total'] - step) / (o['total'] - o['warmup']))


def one_step(model, batch):
    decay = [p for n, p in model.named_parameters() if not (n.endswith('bias') or 'LayerNorm' in n or 'layer_norm' in n)]
    no_decay = [p for n, p in model.named_parameters() if n.endswith('bias') or 'LayerNorm' in n or 'layer_norm' in n]
    lr = lr_at(OPTIM['step'])
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': OPTIM['weight_decay']},
                             {'params': no_decay, 'weight_decay': 0.0}],
                            lr=lr, betas=(OPTIM['beta1'], OPTIM['beta2']), eps=OPTIM['eps'])
    _, ls = losses(model, batch)
    opt.zero_grad()
    ls['total'].backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), OPTIM['max_grad_norm'])
    write_safetensors(os.path.join(OUT, 'grads.safetensors'), [(n, p.grad) for n, p in stored_params(model)])
    opt.step()
    return float(norm), lr


def main():
    torch.set_num_threads(1)  # one thread: reductions in a fixed order, so reruns give identical files
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    model = PreTraining(CONFIG)
    init_weights(model, 1234)
    write_safetensors(os.path.join(OUT, 'weights.safetensors'), stored_params(model))
    batch = collate(EXAMPLES, CONFIG['sbo']['max_targets'])
    with torch.no_grad():
        (mlm, sbo, nsp), ls = losses(model, batch)
    lm_t = batch['lm_target']
    mlm_rows = [mlm[b, p].tolist() for b, e in enumerate(EXAMPLES) for p, _ in e['targets']]
    keep = batch['pair_targets'].view(-1) != -100
    sbo_rows = sbo.view(-1, sbo.size(-1))[keep].tolist()
    assert len(mlm_rows) == int((lm_t != -100).sum())
    norm, lr = one_step(model, batch)
    write_safetensors(os.path.join(OUT, 'after_step.safetensors'), stored_params(model))
    with open(os.path.join(OUT, 'batch.json'), 'w') as f:
        json.dump({'config': CONFIG, 'optim': OPTIM, 'pad_id': PAD, 'examples': EXAMPLES}, f, indent=1)
    expected = {'mlm_logits': mlm_rows, 'sbo_logits': sbo_rows, 'nsp_logits': nsp.tolist(),
                'losses': {k: float(v) for k, v in ls.items()}, 'grad_norm': norm, 'lr': lr,
                'torch': torch.__version__}
    with open(os.path.join(OUT, 'expected.json'), 'w') as f:
        json.dump(expected, f)
    print(json.dumps({'losses': expected['losses'], 'grad_norm': norm, 'lr': lr,
                      'n_mlm': len(mlm_rows), 'n_sbo': len(sbo_rows)}))


if __name__ == '__main__':
    main()
