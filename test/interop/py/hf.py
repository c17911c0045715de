"""The transformers side of span's interop tests (test/interop/*.test.ts; issue 34).

Reads one JSON request on stdin, a list of jobs, and writes one JSON answer on stdout, a list of
results in the same order, so one Python start (torch and transformers import in seconds) serves a
whole test file. Every model runs in eval mode, fp32, on the CPU. Jobs:

  {"job": "load", "dir", "cls", "inputs": [{"ids", "segments", "mask"?}], "choices": K?}
      transformers.<cls>.from_pretrained(dir, output_loading_info=True): the loading info
      (missing, unexpected, mismatched keys) and the model's outputs for each input
      (last_hidden_state or the head's logits; BertForMultipleChoice takes K rows per example).
  {"job": "tokenize", "dir", "texts"}
      AutoTokenizer.from_pretrained(dir) (the fast tokenizer): ids without special tokens, with
      split_special_tokens=True ("ids") and as called by default ("default": a special token's
      text such as "[MASK]" inside the input becomes that token).
  {"job": "make", "cls", "config", "seed", "dir", "bin_dir"?, "vocab", "inputs"}
      a model transformers initialises (torch.manual_seed(seed)), saved with save_pretrained(dir)
      (safetensors) and, with bin_dir, as torch.save(model.state_dict()) → bin_dir/pytorch_model.bin
      beside config.json and vocab.txt; with its outputs on the inputs, as "load" gives them.
  {"job": "meta", "dir"}
      BertConfig.from_pretrained(dir) (a config.json alone) and BertForPreTraining built from it on
      torch's meta device (shapes, no weights): the sizes transformers reads, the layers and the
      attention heads its model has, and every key of its state dict with its shape.
"""
import json
import os
import shutil
import sys

import torch
import transformers
from transformers import AutoTokenizer, BertConfig


def run(model, cls, inputs, choices):
    outs = []
    with torch.no_grad():
        for x in inputs:
            ids = torch.tensor([x['ids']])
            seg = torch.tensor([x.get('segments') or [0] * len(x['ids'])])
            mask = torch.tensor([x.get('mask') or [1] * len(x['ids'])])
            if cls == 'BertForMultipleChoice':
                # the example's K choices, each padded to the same length: [1, K, T]
                ids, seg, mask = (t.view(1, choices, -1) for t in (ids, seg, mask))
            o = model(input_ids=ids, token_type_ids=seg, attention_mask=mask, output_hidden_states=cls == 'BertForPreTraining')
            if cls == 'BertModel':
                outs.append({'hidden': o.last_hidden_state[0].tolist()})
            elif cls == 'BertForPreTraining':
                outs.append({'mlm': o.prediction_logits[0].tolist(), 'hidden': o.hidden_states[-1][0].tolist()})
            elif cls == 'BertForQuestionAnswering':
                outs.append({'start': o.start_logits[0].tolist(), 'end': o.end_logits[0].tolist()})
            else:
                outs.append({'logits': o.logits[0].tolist()})
    return outs


def load(job):
    model_cls = getattr(transformers, job['cls'])
    model, info = model_cls.from_pretrained(job['dir'], output_loading_info=True, torch_dtype=torch.float32)
    model.eval()
    info = {k: sorted(str(x) for x in v) for k, v in info.items() if k in ('missing_keys', 'unexpected_keys', 'mismatched_keys')}
    return {'info': info, 'outputs': run(model, job['cls'], job.get('inputs', []), job.get('choices'))}


def tokenize(job):
    tok = AutoTokenizer.from_pretrained(job['dir'])
    # split_special_tokens: "[CLS]" in the text is text (as span and BERT's tokenizer read it), not the special token
    ids = [tok(t, add_special_tokens=False, split_special_tokens=True)['input_ids'] for t in job['texts']]
    default = [tok(t, add_special_tokens=False)['input_ids'] for t in job['texts']]
    return {'class': type(tok).__name__, 'fast': tok.is_fast, 'lower': bool(getattr(tok, 'do_lower_case', None)), 'ids': ids, 'default': default}


def make(job):
    torch.manual_seed(job['seed'])
    model = getattr(transformers, job['cls'])(BertConfig(**job['config']))
    model.eval()
    model.save_pretrained(job['dir'])
    shutil.copy(job['vocab'], os.path.join(job['dir'], 'vocab.txt'))
    if job.get('bin_dir'):
        os.makedirs(job['bin_dir'], exist_ok=True)
        torch.save(model.state_dict(), os.path.join(job['bin_dir'], 'pytorch_model.bin'))
        shutil.copy(os.path.join(job['dir'], 'config.json'), job['bin_dir'])
        shutil.copy(job['vocab'], os.path.join(job['bin_dir'], 'vocab.txt'))
    return {'files': sorted(os.listdir(job['dir'])), 'outputs': run(model, job['cls'], job.get('inputs', []), None)}


def meta(job):
    config = BertConfig.from_pretrained(job['dir'])
    with torch.device('meta'):
        model = transformers.BertForPreTraining(config)
    att = model.bert.encoder.layer[0].attention.self
    sizes = ('hidden_size', 'num_hidden_layers', 'num_attention_heads', 'intermediate_size', 'vocab_size')
    return {
        'config': {k: getattr(config, k) for k in sizes},
        'layers': len(model.bert.encoder.layer),
        'heads': att.num_attention_heads,
        'head_size': att.attention_head_size,
        'keys': {k: list(v.shape) for k, v in model.state_dict().items()},
    }


def main():
    torch.set_num_threads(int(os.environ.get('SPAN_INTEROP_THREADS', '2')))
    jobs = json.load(sys.stdin)
    fns = {'load': load, 'tokenize': tokenize, 'make': make, 'meta': meta}
    out = []
    for job in jobs:
        out.append(fns[job['job']](job))
        if job['job'] != 'tokenize':
            out[-1]['versions'] = {'torch': torch.__version__, 'transformers': transformers.__version__}
    json.dump(out, sys.stdout)


if __name__ == '__main__':
    main()
