#!/usr/bin/python3
"""Small PyTorch checkpoints for span's pytorch_model.bin reader, and PyTorch's forward on them.

Run with Debian's Python, which has torch 1.13 (transformers is not installed):

    /usr/bin/python3 tools/make-torch-fixtures.py

It writes fixtures/torch/: a tiny BERT (2 layers, hidden 32, vocab 100) saved the ways
released checkpoints are saved, each directory a Hugging Face layout (config.json + weights
[+ vocab.txt]) with expected.json = the last hidden states of PyTorch's forward (float64 over
the stored weights) on fixed inputs:

  zip-f32       torch >= 1.6 zip archive, bert. prefix, tied decoder weight (one storage with
                the word embeddings), q/k/v weights views into one storage (offsets), a
                transposed (non-contiguous) weight, the decoder bias alias
  legacy-f32    the legacy pickle stream (_use_new_zipfile_serialization=False)
  zip-f16       fp16 storages
  legacy-bf16   bf16 storages, legacy stream
  gamma-bare    a bare BertModel state dict (no bert. prefix), LayerNorm.gamma/beta, legacy
                stream, no vocab.txt (as SpanBERT's releases)
  sharded-bin   pytorch_model.bin.index.json over two zip shards
  sharded-st    model.safetensors.index.json over two safetensors shards
  both          model.safetensors and a pytorch_model.bin that is not a checkpoint at all
                (reading it would fail: the safetensors file must win)
  hostile/      files that must be refused: a pickle whose __reduce__ calls os.system (zip and
                legacy), an unknown global, a wrong magic number, a storage shorter than its
                tensors, a shape that does not fit its storage

The BERT is tools/golden_model.py's (plain nn.Module code following Hugging Face's
modeling_bert.py): post-LN, erf GeLU, dropout 0.
"""
import collections
import io
import json
import os
import pickle
import shutil
import sys
import zipfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import golden_model as gm  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'torch')
CONFIG = {
    'model_type': 'bert', 'architectures': ['BertForPreTraining'], 'vocab_size': 100, 'hidden_size': 32,
    'num_hidden_layers': 2, 'num_attention_heads': 2, 'intermediate_size': 64, 'hidden_act': 'gelu',
    'hidden_dropout_prob': 0.0, 'attention_probs_dropout_prob': 0.0, 'max_position_embeddings': 40,
    'type_vocab_size': 2, 'initializer_range': 0.02, 'layer_norm_eps': 1e-12,
}
MODEL_CONFIG = dict(CONFIG, objectives=['mlm', 'sbo', 'nsp'], sbo={'position_embedding_size': 8, 'max_targets': 4})
WORDS = ['the', 'of', 'and', 'a', 'to', 'in', 'is', 'was', 'he', 'for', 'it', 'with', 'as', 'his', 'on', 'be', 'at',
         'by', 'had', 'this', 'not', 'but', 'from', 'or', 'have', 'an', 'they', 'which', 'one', 'you', 'were', 'her',
         'all', 'she', 'there', 'would', 'their', 'we', 'him', 'been', 'has', 'when', 'who', 'will', 'more', 'no',
         'if', 'out', 'so', 'said', 'what', 'up', 'its', 'about', 'into', 'than', 'them', 'can', 'only', 'other',
         'new', 'some', 'could', 'time', 'these', 'two', 'may', 'then', 'do', 'first', 'any', 'my', 'now', 'such',
         'like', 'our', 'over', 'man', 'me', 'even', 'most', 'made', 'after', 'also', 'did', 'many', 'before',
         'must', 'through', 'back', 'years', '.', ',', '##s', '##ed']
VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'] + WORDS
assert len(VOCAB) == 100, len(VOCAB)
# two sequences, [CLS] … [SEP], one with a second segment
INPUTS = [
    {'ids': [2, 5, 17, 9, 40, 6, 98, 3], 'segments': [0] * 8},
    {'ids': [2, 30, 11, 73, 3, 61, 24, 88, 50, 12, 3], 'segments': [0] * 5 + [1] * 6},
]


def model(seed):
    torch.manual_seed(seed)
    m = gm.PreTraining(MODEL_CONFIG)
    gm.init_weights(m, seed)
    return m.eval()


def hf_state(m):
    """BertForPreTraining's state dict: no SBO head; cls.predictions.decoder.weight tied."""
    return collections.OrderedDict((k, v.detach().clone() if 'decoder' not in k else v) for k, v in m.state_dict().items()
                                   if not k.startswith('cls.pair_target_predictions'))


def tie(sd):
    sd['cls.predictions.decoder.weight'] = sd['bert.embeddings.word_embeddings.weight']
    return sd


def forward(sd):
    """PyTorch's last hidden states in float64 over the stored (cast-back) weights."""
    c = dict(MODEL_CONFIG)
    bert = gm.Bert(c).double().eval()
    plain = {k[len('bert.'):]: v.double() for k, v in sd.items() if k.startswith('bert.')}
    bert.load_state_dict(plain)
    out = []
    with torch.no_grad():
        for x in INPUTS:
            ids = torch.tensor([x['ids']])
            h, _ = bert(ids, torch.tensor([x['segments']]), torch.ones_like(ids))
            out.append(h[0].tolist())
    return out


def write_dir(name, sd, save, vocab=True, expected_sd=None):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'config.json'), 'w') as f:
        json.dump(CONFIG, f, indent=2)
    if vocab:
        with open(os.path.join(d, 'vocab.txt'), 'w') as f:
            f.write('\n'.join(VOCAB) + '\n')
    save(d)
    with open(os.path.join(d, 'expected.json'), 'w') as f:
        json.dump({'inputs': INPUTS, 'hidden': forward(expected_sd if expected_sd is not None else sd)}, f)


def views(sd):
    """q/k/v weights as slices of one [3H, H] storage; the FFN input weight transposed."""
    for i in range(CONFIG['num_hidden_layers']):
        p = f'bert.encoder.layer.{i}.attention.self.'
        qkv = torch.cat([sd[p + 'query.weight'], sd[p + 'key.weight'], sd[p + 'value.weight']])
        h = CONFIG['hidden_size']
        sd[p + 'query.weight'], sd[p + 'key.weight'], sd[p + 'value.weight'] = qkv[:h], qkv[h:2 * h], qkv[2 * h:]
        w = f'bert.encoder.layer.{i}.intermediate.dense.weight'
        sd[w] = sd[w].t().contiguous().t()
        assert not sd[w].is_contiguous()
    return sd


def bare_gamma(sd):
    out = collections.OrderedDict()
    for k, v in sd.items():
        if not k.startswith('bert.'):
            continue
        k = k[len('bert.'):]
        if 'LayerNorm' in k:
            k = k.replace('.weight', '.gamma').replace('.bias', '.beta')
        out[k] = v
    return out


def cast(sd, dtype):
    """The state dict in dtype, the tied weight still one storage."""
    out = collections.OrderedDict((k, v.to(dtype)) for k, v in sd.items() if k != 'cls.predictions.decoder.weight')
    return tie(out)


def save_zip(sd, name='pytorch_model.bin'):
    return lambda d: torch.save(sd, os.path.join(d, name))


def save_legacy(sd):
    return lambda d: torch.save(sd, os.path.join(d, 'pytorch_model.bin'), _use_new_zipfile_serialization=False)


def save_sharded(sd, kind):
    def save(d):
        names = list(sd.keys())
        half = len(names) // 2
        shards = [names[:half], names[half:]]
        weight_map = {}
        for i, part in enumerate(shards):
            if kind == 'bin':
                fname = f'pytorch_model-0000{i + 1}-of-00002.bin'
                torch.save(collections.OrderedDict((k, sd[k]) for k in part), os.path.join(d, fname))
            else:
                fname = f'model-0000{i + 1}-of-00002.safetensors'
                gm.write_safetensors(os.path.join(d, fname), [(k, sd[k]) for k in part])
            weight_map.update({k: fname for k in part})
        index = 'pytorch_model.bin.index.json' if kind == 'bin' else 'model.safetensors.index.json'
        with open(os.path.join(d, index), 'w') as f:
            json.dump({'metadata': {'total_size': 0}, 'weight_map': weight_map}, f, indent=1)
    return save


class Evil:
    def __reduce__(self):
        return (os.system, ('touch span-pwned-marker',))


class FakeTensor:
    """Pickles as _rebuild_tensor_v2 over a real storage with the given offset/size/stride."""

    def __init__(self, storage, offset, size, stride):
        self.args = (storage, offset, tuple(size), stride, False, collections.OrderedDict())

    def __reduce_ex__(self, proto):
        return (torch._utils._rebuild_tensor_v2, self.args)


def hostile():
    d = os.path.join(OUT, 'hostile')
    os.makedirs(d, exist_ok=True)
    torch.save({'w': Evil()}, os.path.join(d, 'os-system.bin'))
    torch.save({'w': Evil()}, os.path.join(d, 'os-system-legacy.bin'), _use_new_zipfile_serialization=False)
    torch.save({'w': collections.Counter('ab')}, os.path.join(d, 'unknown-global.bin'))
    s = torch.arange(6, dtype=torch.float32).storage()
    torch.save({'w': FakeTensor(s, 0, (4, 4), (4, 1))}, os.path.join(d, 'shape-too-big.bin'))
    torch.save({'w': FakeTensor(s, 100, (2,), (1,))}, os.path.join(d, 'offset-past-end.bin'))
    # a legacy stream whose first pickle is not torch's magic number
    buf = io.BytesIO()
    torch.save({'w': torch.ones(2)}, buf, _use_new_zipfile_serialization=False)
    raw = buf.getvalue()
    good = pickle.dumps(0x1950a86a20f9469cfc6c, protocol=2)
    assert raw.startswith(good)
    with open(os.path.join(d, 'wrong-magic.bin'), 'wb') as f:
        f.write(pickle.dumps(0x1950a86a20f9469cfc6d, protocol=2) + raw[len(good):])
    # a zip whose storage entry is shorter than its tensor (the archive itself is well formed)
    src = io.BytesIO()
    torch.save({'w': torch.ones(8)}, src)
    with zipfile.ZipFile(io.BytesIO(src.getvalue())) as zin, zipfile.ZipFile(os.path.join(d, 'short-storage.bin'), 'w') as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            zout.writestr(info.filename, data[:8] if info.filename.endswith('data/0') else data)


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    base = tie(hf_state(model(1)))
    sd = views(tie(hf_state(model(1))))
    sd['cls.predictions.decoder.bias'] = sd['cls.predictions.bias']
    write_dir('zip-f32', sd, save_zip(sd))
    write_dir('legacy-f32', base, save_legacy(base))
    f16 = cast(base, torch.float16)
    write_dir('zip-f16', f16, save_zip(f16))
    bf16 = cast(base, torch.bfloat16)
    write_dir('legacy-bf16', bf16, save_legacy(bf16))
    bare = bare_gamma(base)
    write_dir('gamma-bare', bare, save_legacy(bare), vocab=False, expected_sd=base)
    write_dir('sharded-bin', base, save_sharded(base, 'bin'))
    untied = collections.OrderedDict((k, v) for k, v in base.items() if k != 'cls.predictions.decoder.weight')
    write_dir('sharded-st', untied, save_sharded(untied, 'st'))

    def both(d):
        gm.write_safetensors(os.path.join(d, 'model.safetensors'), list(untied.items()))
        with open(os.path.join(d, 'pytorch_model.bin'), 'wb') as f:
            f.write(b'not a checkpoint: the safetensors file wins\n')
    write_dir('both', base, both)
    hostile()
    with open(os.path.join(OUT, 'vocab.txt'), 'w') as f:
        f.write('\n'.join(VOCAB) + '\n')


if __name__ == '__main__':
    main()
