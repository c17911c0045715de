"""transformers' BertModel over span blocks, as `span encode` runs them (bench/encode-vs-transformers.mjs).

python bench/encode_hf.py CHECKPOINT BLOCKS.ndjson OUT.ndjson [--batch-size 32] [--pool mean|cls|none] [--threads 2] [--bf16]

Reads the blocks (the header line skipped), pads each batch to its longest block with the
checkpoint's [PAD] id, runs BertModel (no pooler) under torch.inference_mode() in fp32 (--bf16: under
torch.autocast bf16, the setting a PyTorch user turns on for speed) and writes
one line per block: the mean over real tokens, the [CLS] state, or every token's last hidden state,
as span encode's --pool does. Prints one JSON line: load and encode seconds, the peak RSS is read by
the caller (/usr/bin/time), so that both sides are measured the same way.
"""
import argparse
import json
import time

import torch
from transformers import BertModel


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("blocks")
    ap.add_argument("out")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--pool", default="mean", choices=["mean", "cls", "none"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pad-id", type=int, default=0)
    ap.add_argument("--bf16", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    t0 = time.time()
    model = BertModel.from_pretrained(a.model, add_pooling_layer=False, attn_implementation="sdpa").eval()
    load_s = time.time() - t0
    with open(a.blocks) as f:
        recs = [json.loads(line) for line in f if line.strip()]
    recs = [r for r in recs if "ids" in r]
    t1 = time.time()
    with open(a.out, "w") as out, torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
        for i in range(0, len(recs), a.batch_size):
            batch = recs[i : i + a.batch_size]
            T = max(len(r["ids"]) for r in batch)
            ids = torch.full((len(batch), T), a.pad_id, dtype=torch.long)
            seg = torch.zeros((len(batch), T), dtype=torch.long)
            mask = torch.zeros((len(batch), T), dtype=torch.long)
            for b, r in enumerate(batch):
                n = len(r["ids"])
                ids[b, :n] = torch.tensor(r["ids"])
                seg[b, :n] = torch.tensor(r.get("segments", [0] * n))
                mask[b, :n] = 1
            h = model(input_ids=ids, token_type_ids=seg, attention_mask=mask).last_hidden_state.float()  # [B, T, H]
            if a.pool == "mean":
                m = mask.unsqueeze(2).float()
                v = (h * m).sum(1) / m.sum(1).clamp(min=1)
                rows = [{"vector": [float(x) for x in row]} for row in v]
            elif a.pool == "cls":
                rows = [{"vector": [float(x) for x in row]} for row in h[:, 0]]
            else:
                rows = [{"hidden": h[b, : len(r["ids"])].tolist()} for b, r in enumerate(batch)]
            for row in rows:
                out.write(json.dumps(row) + "\n")
    print(json.dumps({"load_s": round(load_s, 2), "encode_s": round(time.time() - t1, 2), "blocks": len(recs), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
