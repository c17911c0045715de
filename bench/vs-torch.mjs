#!/usr/bin/env node
// The native backend against the PyTorch people install today (2.x from pip: oneDNN, AVX-512, bf16
// autocast), on the same CPU, interleaved (issue 32). Every round runs each preset × precision once
// through span (bench/native.mjs --only step --precision P) and once through bench/torch_step.py
// (--precision P --sdpa: fp32 against fp32, bf16 against torch.autocast bf16, attention through
// F.scaled_dot_product_attention), each in its own process (so peak RSS is the step's own),
// alternating which side goes first. Full 128-token rows on both sides (span's tokens/s then counts
// the same tokens as PyTorch's).
//   npm run build && node bench/vs-torch.mjs [presets] [--rounds N] [--precisions fp32,bf16] [--threads N]
//   presets default tiny,mini,base (tiny and mini at batch 16 × 128, base at 8 × 128); rounds 3;
//   precisions fp32 and, where the CPU has avx512_bf16 (or AMX), bf16; threads: both sides the same
//   (default: span's pool size, the machine's cores)
// PyTorch: SPAN_TORCH_PYTHON, else the venv of tools/interop-env.sh (torch 2.13.0 CPU and
// transformers from pip, made outside the clone when missing). Then bench/gemm.mjs (GEMM GFLOP/s
// against the machine's peak), bench/encode-vs-transformers.mjs (encode against BertModel, once per
// precision: fp32 against fp32, bf16 against autocast bf16) and bench/fill-vs-transformers.mjs (fill
// against BertForMaskedLM, both precisions, peak RSS) run when present. Lines (JSON):
//   machine          CPU model, cores, bf16 capability, load averages at the start
//   torch            the python and torch version used
//   run              one process's figures: round, side, preset, precision, tokens/s, step ms, CPU ms, peak RSS MB
//   round_ratio      span ÷ PyTorch tokens/s within one round (drift between rounds cancels)
//   native_vs_torch  per preset × precision: medians of each side, their ratio, the median of the
//                    per-round ratios, every round's ratio, peak RSS of each side and their ratio
//   load             load averages at the end (a figure from a loaded machine is not a figure)
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {cpus, loadavg} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const opt = (name, d) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv.splice(i, 2)[1] : d
}
const rounds = Number(opt('--rounds', '3'))
const cpuFlags = (() => {
  try {
    return (readFileSync('/proc/cpuinfo', 'utf8').match(/^flags\s*:(.*)$/m)?.[1] ?? '').trim().split(/\s+/)
  } catch {
    return []
  }
})()
const bf16Cpu = cpuFlags.includes('avx512_bf16') || cpuFlags.includes('amx_bf16')
const precisions = opt('--precisions', bf16Cpu ? 'fp32,bf16' : 'fp32').split(',')
const threads = opt('--threads', String(cpus().length))
const presets = (argv[0] ?? 'tiny,mini,base').split(',')
const out = (o) => console.log(JSON.stringify(o))
const load = () => loadavg().map((x) => +x.toFixed(2))
const median = (xs) => {
  const s = xs.slice().sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** JSON lines a child printed, or null (with its stderr) when it failed. */
function run(cmd, args, env = {}) {
  const r = spawnSync(cmd, args, {encoding: 'utf8', env: {...process.env, ...env}, maxBuffer: 1 << 24})
  if (r.status !== 0) {
    const tail = (r.stderr || r.error?.message || '').trim().split('\n').slice(-3).join(' | ')
    console.error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${tail}`)
    return null
  }
  return r.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
}

/** The python with PyTorch from pip: SPAN_TORCH_PYTHON, else the interop venv (made when missing). */
function torchPython() {
  if (process.env.SPAN_TORCH_PYTHON) return process.env.SPAN_TORCH_PYTHON
  const env = join(here, '..', 'tools', 'interop-env.sh')
  const venv = spawnSync('bash', [env, '--path'], {encoding: 'utf8'}).stdout.trim()
  const py = join(venv, 'bin', 'python')
  if (!existsSync(py)) spawnSync('bash', [env], {stdio: ['ignore', 'inherit', 'inherit']})
  return existsSync(py) ? py : null
}

function torchVersion(py) {
  const r = spawnSync(py, ['-c', 'import torch; print(torch.__version__)'], {encoding: 'utf8'})
  return r.status === 0 ? r.stdout.trim() : null
}

const span = (preset, precision) =>
  run(process.execPath, [join(here, 'native.mjs'), preset, 'native', '--only', 'step', '--precision', precision, '--threads', threads])?.find((o) => o.bench === 'step')
const torch = (py, preset, precision) =>
  run(py, [join(here, 'torch_step.py'), preset, '--precision', precision, '--sdpa', '--threads', threads], {OPENBLAS_NUM_THREADS: '1'})?.find((o) => o.bench === 'torch_step')

/** One round: every preset × precision on both sides, the order alternating by round. */
function round(r, py, runs) {
  for (const preset of presets) {
    for (const precision of precisions) {
      const key = `${preset} ${precision}`
      const got = {}
      for (const side of r % 2 ? ['torch', 'native'] : ['native', 'torch']) {
        const o = side === 'native' ? span(preset, precision) : py ? torch(py, preset, precision) : null
        if (!o) continue
        got[side] = o
        out({bench: 'run', round: r + 1, side, preset, precision, batch: o.batch, tokens_per_s: o.tokens_per_s, step_ms: o.step_ms, step_cpu_ms: o.step_cpu_ms, max_rss_mb: o.max_rss_mb})
        if (!runs.has(key)) runs.set(key, [])
      }
      if (got.native && got.torch) out({bench: 'round_ratio', round: r + 1, preset, precision, ratio: +(got.native.tokens_per_s / got.torch.tokens_per_s).toFixed(3)})
      runs.get(key)?.push(got)
    }
  }
}

function summary(key, rows) {
  const [preset, precision] = key.split(' ')
  const n = rows.filter((g) => g.native).map((g) => g.native)
  const t = rows.filter((g) => g.torch).map((g) => g.torch)
  const row = {bench: 'native_vs_torch', preset, precision, batch: n[0]?.batch, rounds: rows.length, native_tokens_per_s: median(n.map((o) => o.tokens_per_s)), native_max_rss_mb: median(n.map((o) => o.max_rss_mb))}
  if (t.length === 0) return row
  const ratios = rows.filter((g) => g.native && g.torch).map((g) => +(g.native.tokens_per_s / g.torch.tokens_per_s).toFixed(3))
  const trss = median(t.map((o) => o.max_rss_mb))
  return {...row, torch_tokens_per_s: median(t.map((o) => o.tokens_per_s)), speed_ratio: +(row.native_tokens_per_s / median(t.map((o) => o.tokens_per_s))).toFixed(2),
    speed_ratio_paired: +median(ratios).toFixed(2), round_ratios: ratios, torch_max_rss_mb: trss, rss_ratio: +(row.native_max_rss_mb / trss).toFixed(2)}
}

out({bench: 'machine', cpu: cpus()[0]?.model, cores: cpus().length, threads: Number(threads), bf16_dot_products: bf16Cpu, load_start: load()})
const py = torchPython()
const version = py && torchVersion(py)
if (!version) console.error('PyTorch not found (SPAN_TORCH_PYTHON, or tools/interop-env.sh\'s venv): span figures only')
out({bench: 'torch', python: version ? py : null, version})
const runs = new Map()
for (let r = 0; r < rounds; r++) round(r, version ? py : null, runs)
for (const [key, rows] of runs) out(summary(key, rows))
const extras = [
  ['gemm.mjs'],
  ...precisions.map((p) => ['encode-vs-transformers.mjs', '--precision', p]),
  ['fill-vs-transformers.mjs', '--precisions', precisions.join(','), '--threads', threads],
]
for (const [file, ...args] of extras) {
  if (existsSync(join(here, file))) (run(process.execPath, [join(here, file), ...args], version ? {SPAN_TORCH_PYTHON: py} : {}) ?? []).forEach(out)
}
out({bench: 'load', load_end: load()})
