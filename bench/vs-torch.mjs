#!/usr/bin/env node
// The native backend against PyTorch on the same CPU, interleaved: every round runs each preset
// once through span (bench/native.mjs --only step) and once through bench/torch_step.py, each in
// its own process (so peak RSS is the step's own), alternating which goes first. Then, per
// preset, the medians over rounds:
//   npm run build && node bench/vs-torch.mjs [presets] [--rounds N]
//   presets default tiny,mini,base (tiny and mini at batch 16 × 128, base at 8 × 128); rounds 3
// PyTorch runs in its best setting on such a machine: Debian's python3-torch (/usr/bin/python3,
// or SPAN_TORCH_PYTHON), OPENBLAS_NUM_THREADS=1 and 2 intra-op threads. Without torch it says
// so and prints span's figures alone. Lines (JSON):
//   sgemm             the addon's 1024³ sgemm at 1 thread and at the pool size (the peak)
//   run               one process's figures: side, preset, tokens/s, step ms, peak RSS MB
//   native_vs_torch   per preset: median tokens/s of each side and their ratio (and the median of
//                     the per-round ratios, which a machine slowing down mid-run does not skew), span's achieved
//                     GFLOP/s on the step's matrix products against the sgemm peak, and the
//                     median peak RSS of each side and their ratio
import {spawnSync} from 'node:child_process'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const ri = argv.indexOf('--rounds')
const rounds = ri >= 0 ? Number(argv.splice(ri, 2)[1]) : 3
const presets = (argv[0] ?? 'tiny,mini,base').split(',')
const out = (o) => console.log(JSON.stringify(o))
const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** JSON lines a child printed, or null (with its stderr) when it failed. */
function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, {encoding: 'utf8', env: {...process.env, ...env}, maxBuffer: 1 << 24})
  if (r.status !== 0) {
    console.error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ')}`)
    return null
  }
  return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
}

/** The python that imports torch, or null. */
function torchPython() {
  for (const py of [process.env.SPAN_TORCH_PYTHON, '/usr/bin/python3', 'python3'].filter(Boolean)) {
    const r = spawnSync(py, ['-c', 'import torch'], {encoding: 'utf8'})
    if (r.status === 0) return py
  }
  return null
}

const native = (preset) => run(process.execPath, [join(here, 'native.mjs'), preset, 'native', '--only', 'step'])?.find((o) => o.bench === 'step')
const torch = (py, preset) => run(py, [join(here, 'torch_step.py'), preset], {OPENBLAS_NUM_THREADS: '1'})?.find((o) => o.bench === 'torch_step')

const py = torchPython()
if (!py) console.error('PyTorch not found (SPAN_TORCH_PYTHON, /usr/bin/python3, python3): span figures only')
const sgemm = run(process.execPath, [join(here, 'native.mjs'), 'tiny', 'native', '--only', 'sgemm']) ?? []
sgemm.forEach(out)
// spread-ok: one row per sgemm shape benched
const peak = Math.max(0, ...sgemm.map((o) => o.gflop_per_s))
const runs = {native: new Map(), torch: new Map()}
for (let r = 0; r < rounds; r++) {
  for (const preset of presets) {
    const sides = r % 2 ? ['torch', 'native'] : ['native', 'torch']
    for (const side of sides) {
      if (side === 'torch' && !py) continue
      const o = side === 'native' ? native(preset) : torch(py, preset)
      if (!o) continue
      out({bench: 'run', round: r + 1, side, preset, tokens_per_s: o.tokens_per_s, step_ms: o.step_ms, max_rss_mb: o.max_rss_mb, ...(o.gflop_per_s ? {gflop_per_s: o.gflop_per_s} : {})})
      if (!runs[side].has(preset)) runs[side].set(preset, [])
      runs[side].get(preset).push(o)
    }
  }
}
for (const preset of presets) {
  const n = runs.native.get(preset) ?? []
  const t = runs.torch.get(preset) ?? []
  if (n.length === 0) continue
  const tok = median(n.map((o) => o.tokens_per_s))
  const gflops = median(n.map((o) => o.gflop_per_s))
  const rss = median(n.map((o) => o.max_rss_mb))
  const row = {bench: 'native_vs_torch', preset, batch: n[0].batch, rounds: n.length, native_tokens_per_s: tok, native_gflop_per_s: gflops, sgemm_peak_gflop_per_s: peak, of_peak: +(gflops / peak).toFixed(2), native_max_rss_mb: rss}
  if (t.length) {
    const ttok = median(t.map((o) => o.tokens_per_s))
    const trss = median(t.map((o) => o.max_rss_mb))
    const paired = n.filter((o, i) => t[i]).map((o, i) => o.tokens_per_s / t[i].tokens_per_s) // same round: drift cancels
    Object.assign(row, {torch_tokens_per_s: ttok, speed_ratio: +(tok / ttok).toFixed(2), speed_ratio_paired: +median(paired).toFixed(2), torch_max_rss_mb: trss, rss_ratio: +(rss / trss).toFixed(2)})
  }
  out(row)
}
