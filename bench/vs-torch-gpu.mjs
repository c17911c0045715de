#!/usr/bin/env node
// span's cuda backend against PyTorch eager on the same GPU (issue 22), interleaved: every round
// runs each configuration once through span (bench/cuda-step.mjs) and once through
// bench/torch_step.py (--device cuda, SDPA attention, torch.autocast for bf16), each in its own
// process, alternating which goes first. Then per configuration the medians over rounds.
//   node bench/vs-torch-gpu.mjs [configs] [--rounds N] [--steps N]
//   configs default tiny:32x128,base:32x128,base:16x512; precisions fp32,tf32,bf16 (SPAN_GPU_PRECISIONS)
// span's bf16 is --precision bf16 (bf16 GEMM operands, fp32 accumulation, everything else fp32),
// PyTorch's torch.autocast bf16 (the same ops in bf16, but bf16 outputs too). MFU is the
// step's matrix-product FLOP/s (bench/lib/step-flops.mjs) over the GPU's dense bf16 peak
// (SPAN_GPU_PEAK_TFLOPS, default 989: an H100 SXM). PyTorch: SPAN_TORCH_PYTHON or python3.
// Lines (JSON): run (one process's figures), span_vs_torch (per configuration and precision).
import {spawnSync} from 'node:child_process'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const flag = (name, d) => (argv.includes(name) ? Number(argv.splice(argv.indexOf(name), 2)[1]) : d)
const rounds = flag('--rounds', 2)
const steps = flag('--steps', 8)
const configs = (argv[0] ?? 'tiny:32x128,base:32x128,base:16x512').split(',').map((c) => c.split(':'))
const precisions = (process.env.SPAN_GPU_PRECISIONS ?? 'fp32,tf32,bf16').split(',')
const peak = Number(process.env.SPAN_GPU_PEAK_TFLOPS ?? 989) * 1e12
const py = process.env.SPAN_TORCH_PYTHON ?? 'python3'
const out = (o) => console.log(JSON.stringify(o))
const median = (xs) => (xs.length ? xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)] : null)

function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, {encoding: 'utf8', env: {...process.env, ...env}, maxBuffer: 1 << 24, timeout: 240_000})
  if (r.status !== 0) {
    console.error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`)
    return null
  }
  return (
    r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .pop() ?? null
  )
}

const span = (preset, shape, precision) => run(process.execPath, [join(here, 'cuda-step.mjs'), preset, shape, String(steps)], {SPAN_CUDA_PRECISION: precision})
const torch = (preset, shape, precision) =>
  run(py, [join(here, 'torch_step.py'), preset, '--device', 'cuda', '--precision', precision, '--batch', shape, '--sdpa'])

const results = new Map()
/** The medians so far of one configuration and precision. */
function summary(key) {
  const {span: s, torch: t} = results.get(key)
  const [preset, batch, precision] = key.split(':')
  const tps = (xs) => median(xs.map((o) => o.tokens_per_s))
  const [st, tt] = [tps(s), tps(t)]
  const gflop = s[0]?.gflop_per_step
  const mfu = st && gflop ? +((gflop * 1e9 * (st / (Number(batch.split('x')[0]) * Number(batch.split('x')[1])))) / peak).toFixed(3) : null
  const mem = (xs, k) => median(xs.map((o) => o[k]).filter((x) => x != null))
  out({
    bench: 'span_vs_torch',
    preset,
    batch,
    precision,
    span_tokens_per_s: st,
    torch_tokens_per_s: tt,
    ratio: st && tt ? +(st / tt).toFixed(3) : null,
    span_mfu: mfu,
    span_peak_mb: mem(s, 'peak_live_mb'),
    torch_peak_mb: mem(t, 'peak_mem_mb'),
  })
}

for (let r = 0; r < rounds; r++) {
  for (const [preset, shape] of configs) {
    for (const precision of precisions) {
      const key = `${preset}:${shape}:${precision}`
      const sides =
        r % 2
          ? [
              ['torch', torch],
              ['span', span],
            ]
          : [
              ['span', span],
              ['torch', torch],
            ]
      for (const [side, f] of sides) {
        const o = f(preset, shape, precision)
        if (o) out({...o, bench: 'run', side, round: r})
        if (!results.has(key)) results.set(key, {span: [], torch: []})
        if (o) results.get(key)[side].push(o)
      }
      if (r === rounds - 1) summary(key) // as each finishes: a run cut short keeps what it measured
    }
  }
}
