"""transformers' BertForMaskedLM over the texts `span fill --head mlm` reads (bench/fill-vs-transformers.mjs).

python bench/fill_hf.py CHECKPOINT TEXTS.txt OUT.ndjson [--batch-size 1] [--k 5] [--threads 2] [--bf16]

What the fill-mask pipeline does, without its per-mask-count limits: the checkpoint's tokenizer (vocab.txt,
do_lower_case) over each text, BertForMaskedLM's logits at every position (the model's own forward: the
[B, T, V] logits are what a transformers user gets), then at each [MASK] the log-softmax and its k best
tokens, [PAD] [CLS] [SEP] [MASK] [UNK] left out as span fill leaves them out. Batches of --batch-size texts
padded to the longest (span fill runs one text at a time: the bench's default is 1), fp32 under
torch.inference_mode() (--bf16: under torch.autocast bf16). Writes one line per text:
{"runs": [[top-1 text of each consecutive [MASK] run], ...], "topk": [[k ids] per [MASK]]}, the run's text
joined as span's detokenize does (`##` pieces to the word before). Prints one JSON line: load and fill
seconds; peak RSS is read by the caller (/usr/bin/time), as for span.
"""

import argparse
import json
import time

import torch
from transformers import BertForMaskedLM, BertTokenizerFast


def detokenize(tokens):
    """span's detokenize (src/core/model/fill.ts): `##` pieces joined to the word before, words by spaces."""
    out = ""
    for t in tokens:
        out = out + t[2:] if t.startswith("##") else (t if out == "" else out + " " + t)
    return out


def runs_of(ids, mask_id):
    """Consecutive [MASK] positions of one text, as lists of positions."""
    runs, cur = [], []
    for i, t in enumerate(ids):
        if t == mask_id:
            cur.append(i)
        elif cur:
            runs.append(cur)
            cur = []
    return runs + ([cur] if cur else [])


def fill_batch(model, tok, texts, banned, k):
    """The records of one batch of texts."""
    enc = tok(texts, padding=True, return_tensors="pt")
    logits = model(**enc).logits.float()  # [B, T, V]
    recs = []
    for b in range(len(texts)):
        ids = enc["input_ids"][b].tolist()
        runs = runs_of(ids, tok.mask_token_id)
        pos = [p for r in runs for p in r]
        lp = torch.log_softmax(logits[b, pos], dim=-1)  # [N, V]
        lp[:, banned] = float("-inf")
        top = torch.topk(lp, k, dim=-1).indices.tolist()  # [N, k]
        first = iter(t[0] for t in top)
        texts_ = [detokenize(tok.convert_ids_to_tokens([next(first) for _ in r])) for r in runs]
        recs.append({"runs": texts_, "topk": top})
    return recs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("texts")
    ap.add_argument("out")
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--bf16", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    t0 = time.time()
    tok = BertTokenizerFast.from_pretrained(a.model)
    model = BertForMaskedLM.from_pretrained(a.model, attn_implementation="sdpa").eval()
    load_s = time.time() - t0
    banned = [tok.pad_token_id, tok.cls_token_id, tok.sep_token_id, tok.mask_token_id, tok.unk_token_id]
    with open(a.texts, encoding="utf-8") as f:
        texts = [line.rstrip("\n") for line in f if line.strip()]
    t1 = time.time()
    with open(a.out, "w") as out, torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
        for i in range(0, len(texts), a.batch_size):
            for rec in fill_batch(model, tok, texts[i : i + a.batch_size], banned, a.k):
                out.write(json.dumps(rec) + "\n")
    print(json.dumps({"load_s": round(load_s, 2), "fill_s": round(time.time() - t1, 2), "texts": len(texts), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
