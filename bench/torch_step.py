#!/usr/bin/env python3
"""PyTorch reference for bench/native.mjs: one full SpanBERT pre-training step (forward with
dropout, backward, global-norm clipping at 1.0, AdamW) of span's model on the CPU, same
presets, batch (16 x 128; base 8 x 128), vocabulary (30,522) and synthetic masking (spans of
1-5 tokens until 15% of each block), so tokens/s can be compared with span's backends.

    OPENBLAS_NUM_THREADS=1 /usr/bin/python3 bench/torch_step.py [presets] [--threads N]

presets default tiny,mini. On a GPU (tools/gpu-check.sh, bench/vs-torch-gpu.mjs):

    python3 bench/torch_step.py base --device cuda --precision bf16 --batch 32x128 [--sdpa]

--precision fp32 | tf32 (matmuls through TF32) | bf16 (torch.autocast bf16); --sdpa runs the
attention through F.scaled_dot_product_attention (PyTorch's fused kernels); on cuda the step is
timed after torch.cuda.synchronize() (median of 10 after 3 warm-ups) and peak_mem_mb is
torch.cuda.max_memory_allocated. Prints one JSON line per preset (median of 3 steps after one
warm-up; max_rss_mb is the process's peak RSS so far, so run a preset alone to read its
own), and one for a 1024^3 torch.mm (the machine's measured sgemm peak through torch).
The model mirrors src/core/model: post-LN BERT encoder (GeLU erf form), the MLM head
(dense, GeLU, LayerNorm, decoder tied to the word embeddings plus a bias) and SpanBERT's SBO
head (MLPWithLayerNorm over [h(s-1); h(e+1); p(i-s)], tied decoder with its own bias); the
loss is MLM_sum/n_mlm + SBO_sum/n_sbo as in src/core/model/pretraining.ts.
"""
import json
import math
import os
import random
import resource
import statistics
import sys
import time


def pick_openblas_core():
    """As src/core/engine/native.ts does: OpenBLAS 0.3.21 (Debian 12) takes Zen 4 for a
    Prescott and runs its slowest kernels; name the kernel set the CPU flags support (read
    when the library loads, so before torch is imported). Debian's torch uses that OpenBLAS."""
    if os.environ.get("OPENBLAS_CORETYPE") or not sys.platform.startswith("linux"):
        return
    try:
        flags = next(l for l in open("/proc/cpuinfo") if l.startswith("flags")).split(":")[1].split()
    except (OSError, StopIteration):
        return
    if all(f in flags for f in ("avx512f", "avx512bw", "avx512dq", "avx512vl")):
        os.environ["OPENBLAS_CORETYPE"] = "SkylakeX"
    elif "avx2" in flags and "fma" in flags:
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"


pick_openblas_core()
import torch  # noqa: E402 (after the OpenBLAS core is chosen)
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

PRESETS = {
    "tiny": (2, 128, 2),
    "mini": (4, 256, 4),
    "small": (4, 512, 8),
    "medium": (8, 512, 8),
    "base": (12, 768, 12),
}
V, T, P_SBO, MAX_TARGETS = 30522, 128, 200, 15
SDPA = False  # --sdpa


class Layer(nn.Module):
    """BertLayer: self-attention, dense, dropout, residual, LayerNorm; FFN likewise."""

    def __init__(self, h, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.ModuleList(nn.Linear(h, h) for _ in range(3))
        self.attn_out = nn.Linear(h, h)
        self.ln1 = nn.LayerNorm(h, eps=1e-12)
        self.ffn_in = nn.Linear(h, 4 * h)
        self.ffn_out = nn.Linear(4 * h, h)
        self.ln2 = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(0.1)

    def forward(self, x, mask_add):
        b, t, h = x.shape
        d = h // self.heads
        q, k, v = (m(x).view(b, t, self.heads, d).transpose(1, 2) for m in self.qkv)
        if SDPA:
            p = self.drop.p if self.training else 0.0
            ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=mask_add.to(q.dtype), dropout_p=p).transpose(1, 2).reshape(b, t, h)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(d) + mask_add
            ctx = (self.drop(scores.softmax(-1)) @ v).transpose(1, 2).reshape(b, t, h)
        x = self.ln1(x + self.drop(self.attn_out(ctx)))
        return self.ln2(x + self.drop(self.ffn_out(F.gelu(self.ffn_in(x)))))


class SpanBert(nn.Module):
    def __init__(self, layers, h, heads):
        super().__init__()
        self.word = nn.Embedding(V, h)
        self.pos = nn.Embedding(512, h)
        self.types = nn.Embedding(2, h)
        self.ln = nn.LayerNorm(h, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.layers = nn.ModuleList(Layer(h, heads) for _ in range(layers))
        self.pooler = nn.Linear(h, h)  # present in span's model, unused by mlm,sbo
        self.mlm_dense = nn.Linear(h, h)
        self.mlm_ln = nn.LayerNorm(h, eps=1e-12)
        self.mlm_bias = nn.Parameter(torch.zeros(V))
        self.sbo_pos = nn.Embedding(MAX_TARGETS, P_SBO)
        self.sbo1 = nn.Linear(2 * h + P_SBO, h)
        self.sbo_ln1 = nn.LayerNorm(h, eps=1e-12)
        self.sbo2 = nn.Linear(h, h)
        self.sbo_ln2 = nn.LayerNorm(h, eps=1e-12)
        self.sbo_bias = nn.Parameter(torch.zeros(V))
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.02)

    def forward(self, ids, segments, mask, mlm_pos, mlm_labels, sbo_left, sbo_right, sbo_rel, sbo_labels):
        b, t = ids.shape
        x = self.word(ids) + self.pos(torch.arange(t, device=ids.device))[None] + self.types(segments)
        x = self.drop(self.ln(x))
        mask_add = ((1.0 - mask) * -10000.0)[:, None, None, :]
        for layer in self.layers:
            x = layer(x, mask_add)
        flat = x.reshape(b * t, -1)
        m = self.mlm_ln(F.gelu(self.mlm_dense(flat[mlm_pos])))
        mlm = F.cross_entropy(m @ self.word.weight.t() + self.mlm_bias, mlm_labels, reduction="sum") / len(mlm_pos)
        s = torch.cat([flat[sbo_left], flat[sbo_right], self.sbo_pos(sbo_rel)], 1)
        s = self.sbo_ln2(F.gelu(self.sbo2(self.sbo_ln1(F.gelu(self.sbo1(s))))))
        sbo = F.cross_entropy(s @ self.word.weight.t() + self.sbo_bias, sbo_labels, reduction="sum") / len(sbo_left)
        return mlm + sbo


def synthetic_batch(batch, rng):
    """Blocks of T tokens with spans of 1-5 tokens masked until 15% (bench/native.mjs syntheticExample)."""
    ids, mlm_pos, mlm_labels, left, right, rel, sbo_labels = [], [], [], [], [], [], []
    for bi in range(batch):
        row = [101] + [1000 + rng.randrange(V - 1000) for _ in range(T - 2)] + [102]
        budget, pos = math.ceil(0.15 * (T - 2)), 1 + rng.randrange(4)
        while budget > 0 and pos < T - 1:
            n = min(budget, 1 + rng.randrange(5), T - 1 - pos)
            for i in range(pos, pos + n):
                mlm_pos.append(bi * T + i)
                mlm_labels.append(row[i])
                if i - pos < MAX_TARGETS:
                    left.append(bi * T + pos - 1)
                    right.append(bi * T + pos + n)
                    rel.append(i - pos)
                    sbo_labels.append(row[i])
                row[i] = 103
            budget -= n
            pos += n + 2 + rng.randrange(12)
        ids.append(row)
    lt = lambda xs: torch.tensor(xs, dtype=torch.long)
    return (lt(ids), torch.zeros(batch, T, dtype=torch.long), torch.ones(batch, T), lt(mlm_pos), lt(mlm_labels),
            lt(left), lt(right), lt(rel), lt(sbo_labels))


def step(model, opt, batch, bf16=False):
    opt.zero_grad(set_to_none=True)
    with torch.autocast(device_type=batch[0].device.type, dtype=torch.bfloat16, enabled=bf16):
        loss = model(*batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


def sgemm_peak(n=1024):
    a, b = torch.rand(n, n), torch.rand(n, n)
    a @ b
    times = []
    for _ in range(7):
        t0 = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - t0)
    ms = statistics.median(times)
    print(json.dumps({"bench": "torch_mm", "n": n, "threads": torch.get_num_threads(), "ms": round(ms * 1e3, 2),
                      "gflop_per_s": round(2 * n**3 / ms / 1e9, 1)}), flush=True)


def main():
    args = sys.argv[1:]
    threads = 2
    if "--threads" in args:
        i = args.index("--threads")
        threads = int(args[i + 1])
        del args[i:i + 2]
    opt_of = lambda name, default: args.pop(args.index(name) + 1) if name in args else default
    device, precision, shape = opt_of("--device", "cpu"), opt_of("--precision", "fp32"), opt_of("--batch", None)
    for flag in ("--device", "--precision", "--batch"):
        if flag in args:
            args.remove(flag)
    global SDPA, T
    SDPA = "--sdpa" in args
    if SDPA:
        args.remove("--sdpa")
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    presets = (args[0] if args else "tiny,mini").split(",")
    if device == "cpu":
        sgemm_peak()
    for preset in presets:
        layers, h, heads = PRESETS[preset]
        batch_size = 8 if preset == "base" else 16
        if shape:
            batch_size, T = (int(x) for x in shape.split("x"))
        model = SpanBert(layers, h, heads).train().to(device)
        decay = [p for n, p in model.named_parameters() if p.dim() > 1]
        no_decay = [p for n, p in model.named_parameters() if p.dim() <= 1]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=1e-4, betas=(0.9, 0.999), eps=1e-8)
        batch = tuple(x.to(device) for x in synthetic_batch(batch_size, random.Random(7)))
        sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
        warm, reps = (3, 10) if device == "cuda" else (1, 3)
        times = []
        for i in range(warm + reps):
            sync()
            t0 = time.perf_counter()
            loss = step(model, opt, batch, precision == "bf16")
            sync()
            if i >= warm:
                times.append(time.perf_counter() - t0)
        ms = statistics.median(times) * 1e3
        print(json.dumps({"bench": "torch_step", "preset": preset, "batch": f"{batch_size}x{T}", "threads": threads,
                          "torch": torch.__version__, "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"), "loss": round(loss, 4), "step_ms": round(ms),
                          "tokens_per_s": round(batch_size * T / (ms / 1e3)),
                          "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024), "device": device,
                          "precision": precision, "sdpa": SDPA,
                          "peak_mem_mb": round(torch.cuda.max_memory_allocated() / 2**20) if device == "cuda" else None}), flush=True)
        if device == "cuda":
            torch.cuda.reset_peak_memory_stats()


if __name__ == "__main__":
    main()
