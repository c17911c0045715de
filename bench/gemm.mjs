#!/usr/bin/env node
// The native addon's matrix products on each path this build has (span's avx512 kernel, oneDNN, the
// BLAS, the builtin kernel), in fp32 and bf16, against the machine's peak. Plain JS over the built addon:
//   node bench/gemm.mjs [--threads N] [--rounds R] [--shapes 1024,mini,base,decoder] [--paths onednn,avx512]
// The peak is measured, not looked up (native/src/peak.cc): the clock from a chain of dependent
// integer adds, FLOP per cycle from independent 512-bit (or 256-bit) FMAs and vdpbf16ps; the
// machine's peak = threads × FMA pipes × lanes × 2 × GHz (fp32), × 2 again for bf16 (vdpbf16ps:
// two products per 32-bit lane), printed first from one core's clock. Each share of the peak is
// against the peak measured right before that timing with every thread running those loops at once
// (addon.peakAll: the clock all cores hold together, which moves on a shared, boosting CPU). Shapes: 1024³, and per preset the products of a training step
// at batch × 128 tokens (mini 16, base 8): the QKV and FFN linears forward ([B·T, H]·[4H, H]ᵀ),
// their input and weight gradients, and per-head attention ([T, d]·[T, d]ᵀ over B·heads).
// The avx512 path hands products of depth ≤ 64 (the attention rows) to oneDNN where it is linked;
// SPAN_GEMM_SMALL_K=avx512 keeps them on span's kernel. Rounds interleave the paths; each figure
// is the median over rounds of wall-clock GFLOP/s, with the 1-minute load average beside it (the machine may be shared: rerun it quiet for the record)
// and GFLOP per CPU-second × threads (cpu_gflop_per_s), which a loaded machine disturbs less.
// The BLAS path runs the OpenBLAS kernel set OPENBLAS_CORETYPE names (printed; span sets SkylakeX
// on AVX-512 CPUs unless it is set, and some machines set Haswell because older OpenBLAS builds
// miscompute there): run it once with each to compare them. bf16 on the BLAS and builtin paths is
// the reference (operands rounded, then the fp32 kernel), so it shows the conversion's cost.
// Prints one JSON line per measurement, then a table.
import {readFileSync} from 'node:fs'
import {cpus, loadavg} from 'node:os'
import {loadNative, nativeAddon} from '../dist/core/engine/native.js'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : dflt
}
const status = loadNative(opt('--threads') ? Number(opt('--threads')) : undefined)
if (!status.available) {
  console.log(JSON.stringify({bench: 'gemm', skipped: status.error}))
  process.exit(0)
}
const addon = nativeAddon()
const threads = status.threads
const rounds = Number(opt('--rounds', '3'))
const T = 128
const PRESETS = {mini: {B: 16, H: 256, heads: 4}, base: {B: 8, H: 768, heads: 12}}
const out = (o) => console.log(JSON.stringify(o))
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** The shapes to time: {name, batchA, batchB, M, N, K, transA, transB}. */
function shapes() {
  const list = []
  for (const s of opt('--shapes', '1024,mini,base').split(',')) {
    if (/^\d+$/.test(s)) {
      const n = Number(s)
      list.push({name: `${n}³`, batchA: 1, batchB: 1, M: n, N: n, K: n, transA: false, transB: false})
      continue
    }
    if (s === 'decoder') {
      // base's MLM decoder at 8 × 128 (15 targets a row: 120 rows) against the 30522-word embeddings: logits, their input and weight gradients
      const M = 120,
        V = 30522,
        H = 768
      const d = (what, M, N, K, transA, transB) => ({name: `decoder ${what}`, batchA: 1, batchB: 1, M, N, K, transA, transB})
      list.push(
        d(`[${M},${H}]·[${V},${H}]ᵀ`, M, V, H, false, true),
        d(`dx [${M},${V}]·[${V},${H}]`, M, H, V, false, false),
        d(`dW [${M},${V}]ᵀ·[${M},${H}]`, V, H, M, true, false),
      )
      continue
    }
    const p = PRESETS[s]
    if (!p) throw new Error(`--shapes: a size, decoder or one of ${Object.keys(PRESETS).join(', ')}, not ${s}`)
    const BT = p.B * T
    const d = p.H / p.heads
    const lin = (what, M, N, K, transA, transB) => ({name: `${s} ${what}`, batchA: 1, batchB: 1, M, N, K, transA, transB})
    list.push(
      lin(`qkv [${BT},${p.H}]·[${p.H},${p.H}]ᵀ`, BT, p.H, p.H, false, true),
      lin(`ffn up [${BT},${p.H}]·[${4 * p.H},${p.H}]ᵀ`, BT, 4 * p.H, p.H, false, true),
      lin(`ffn dx [${BT},${4 * p.H}]·[${4 * p.H},${p.H}]`, BT, p.H, 4 * p.H, false, false),
      lin(`ffn dW [${BT},${4 * p.H}]ᵀ·[${BT},${p.H}]`, 4 * p.H, p.H, BT, true, false),
      {
        name: `${s} attn QKᵀ ${p.B * p.heads}×[${T},${d}]·[${T},${d}]ᵀ`,
        batchA: p.B * p.heads,
        batchB: p.B * p.heads,
        M: T,
        N: T,
        K: d,
        transA: false,
        transB: true,
      },
    )
  }
  return list
}

/** Seeded uniform values in [-0.5, 0.5). */
function rand(n, seed) {
  const x = new Float32Array(n)
  let s = seed >>> 0
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    x[i] = s / 4294967296 - 0.5
  }
  return x
}

/** One timing of shape g: wall seconds and process CPU seconds over enough repeats for ~0.2 s. */
function time(g, bufs) {
  const run = () => addon.matmul(bufs.a, bufs.b, bufs.c, g.batchA, g.batchB, g.M, g.N, g.K, g.transA, g.transB)
  run() // warm: oneDNN builds its primitives, the pool starts
  const flop = 2 * Math.max(g.batchA, g.batchB) * g.M * g.N * g.K
  const reps = Math.max(1, Math.min(200, Math.round(2e10 / flop)))
  const c0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < reps; i++) run()
  const wall = (performance.now() - t0) / 1000 / reps
  const cu = process.cpuUsage(c0)
  return {wall, cpu: (cu.user + cu.system) / 1e6 / reps, flop}
}

function machine() {
  const info = addon.info()
  const pk = addon.peak()
  const lanes = pk.vectorBits / 32
  const pipes = Math.max(1, Math.round(pk.fp32PerCycle / (2 * lanes))) // FMA pipes per core, from the measured throughput
  const fp32 = threads * pipes * lanes * 2 * pk.ghz // GFLOP/s
  const bf16 = pk.bf16PerCycle > 0 ? threads * Math.max(1, Math.round(pk.bf16PerCycle / (4 * lanes))) * lanes * 4 * pk.ghz : 0
  let model = cpus()[0]?.model ?? '?'
  try {
    model = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? model
  } catch {
    // not Linux
  }
  const m = {
    bench: 'gemm-machine',
    cpu: model,
    cores: cpus().length,
    threads,
    load_1m: +loadavg()[0].toFixed(2),
    ghz: +pk.ghz.toFixed(2),
    fma_latency_cycles: +pk.fmaLatency.toFixed(2),
    vector_bits: pk.vectorBits,
    fp32_flop_per_cycle_core: +pk.fp32PerCycle.toFixed(1),
    fma_pipes_per_core: pipes,
    bf16_flop_per_cycle_core: +pk.bf16PerCycle.toFixed(1),
    peak_fp32_gflop_per_s: +fp32.toFixed(0),
    peak_bf16_gflop_per_s: +bf16.toFixed(0),
    gemm: info.gemm,
    gemm_paths: info.gemmPaths,
    gemm_impl: info.gemmImpl,
    bf16: info.bf16,
    bf16_convert: info.bf16Convert,
    blas: info.blas,
    openblas_coretype: process.env.OPENBLAS_CORETYPE ?? null,
  }
  out(m)
  const only = opt('--paths')?.split(',')
  return {fp32, bf16, paths: only ? info.gemmPaths.filter((p) => only.includes(p)) : info.gemmPaths, path0: info.gemmPath}
}

/**
 * The machine's peak now, in GFLOP/s: every thread of the pool runs the peak loops at once, timed by
 * the wall clock, right before each timing (the clock of a shared or boosting CPU moves between
 * measurements, and a single core's clock overstates what all cores sustain together).
 */
function peakNow(precision) {
  const p = addon.peakAll()
  return precision === 'fp32' ? p.fp32 : p.bf16
}

function main() {
  const peak = machine()
  const rows = []
  for (const g of shapes()) {
    const bufs = {
      a: rand(g.batchA * g.M * g.K, 1),
      b: rand(g.batchB * g.K * g.N, 2),
      c: new Float32Array(Math.max(g.batchA, g.batchB) * g.M * g.N),
    }
    for (const precision of ['fp32', 'bf16']) {
      addon.setPrecision(precision)
      const per = Object.fromEntries(peak.paths.map((p) => [p, []]))
      for (let r = 0; r < rounds; r++)
        for (const p of peak.paths) {
          addon.setGemmPath(p)
          const now = peakNow(precision)
          per[p].push({...time(g, bufs), load: loadavg()[0], peak: now})
        }
      for (const p of peak.paths) {
        const t = per[p]
        const gflops = median(t.map((x) => x.flop / x.wall / 1e9))
        const cpuGflops = median(t.map((x) => (x.flop / x.cpu / 1e9) * threads))
        const shares = t.filter((x) => x.peak > 0).map((x) => x.flop / x.wall / 1e9 / x.peak)
        const row = {
          bench: 'gemm',
          shape: g.name,
          precision,
          path: p,
          threads,
          gflop_per_s: +gflops.toFixed(1),
          share_of_peak: shares.length ? +median(shares).toFixed(3) : null,
          cpu_gflop_per_s: +cpuGflops.toFixed(1),
          rounds: t.map((x) => +(x.flop / x.wall / 1e9).toFixed(1)),
          peak_gflop_per_s: t.map((x) => +x.peak.toFixed(0)),
          load_1m: t.map((x) => +x.load.toFixed(2)),
        }
        out(row)
        rows.push(row)
      }
    }
  }
  addon.setPrecision('fp32')
  addon.setGemmPath(peak.path0)
  console.log(
    `\npeak from one core's clock (${threads} threads): fp32 ${peak.fp32.toFixed(0)} GFLOP/s, bf16 ${peak.bf16.toFixed(0)} GFLOP/s; load ${loadavg()[0].toFixed(2)}`,
  )
  console.log('shape | precision | path | GFLOP/s (median) | share of the peak measured beside each round (median) | peak per round')
  for (const r of rows)
    console.log(`${r.shape} | ${r.precision} | ${r.path} | ${r.gflop_per_s} | ${Math.round(100 * (r.share_of_peak ?? 0))}% | ${r.peak_gflop_per_s.join(', ')}`)
}

main()
