#!/usr/bin/env node
// Where a native pre-training step's time goes (issue 32 item 3): per tfjs kernel (fused ops by
// name: SpanLinear, SpanAttention, …), per addon function, the matrix products against everything
// else, kernel dispatches, and allocations, for `mini` (16 × 128) and `base` (8 × 128), full rows.
//   npm run build && node bench/profile-step.mjs [mini,base] [--steps 3] [--threads 2] [--layers L] [--no-flash] [--no-residual]
// Also prints the ten slowest product shapes of the step, each group replayed alone (profile_step_products).
// (--no-flash, --no-residual: the attention kernel that saves probs, the composite residual LayerNorm, as before issue 32)
// Method: the addon is loaded through a wrapper (process.dlopen patched here, before span loads it)
// that times every addon call and records the shape of every matrix product inside it (linear,
// attention, batch matmul). GEMM time = those products replayed alone through the addon's batch
// matmul (same M, N, K, transposes; contiguous operands), so "other" = step − GEMM is everything
// around the products: epilogues, softmax, LayerNorm, elementwise kernels, tfjs dispatch and JS.
// Per-kernel times come from tf.profile over one step; "outside kernels" = step − Σ kernel time
// (tape bookkeeping, JS, what tf.profile does not see). Allocations: the native buffer pool's new
// and reused buffers per step and tfjs' new tensors. On a loaded machine read the shares, not the ms.
import {Rng} from '../dist/core/data/rng.js'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {stepFlops} from './lib/step-flops.mjs'

const SPAN_ADDON = 'span_native.node'
const calls = new Map() // addon function → {n, ms}
let products = [] // [M, N, K, transA, transB, batch] of the step being recorded
let real = null

/** [M, N, K, transA, transB, batch] of the products inside one addon call (native/src/fused.cc, flash.cc, gemm.cc). */
function productsOf(name, a) {
  const head = (B, A) => B * A
  switch (name) {
    case 'matmul':
      return [[a[5], a[6], a[7], a[8], a[9], Math.max(a[3], a[4])]]
    case 'linearForward':
      return [[a[5], a[7], a[6], false, true, 1]]
    case 'linearBackward':
      return [
        [a[8], a[9], a[10], false, false, 1],
        [a[10], a[9], a[8], true, false, 1],
      ]
    case 'attentionForward':
    case 'flashAttentionForward':
      return [
        [a[7], a[7], a[9], false, true, head(a[6], a[8])],
        [a[7], a[9], a[7], false, false, head(a[6], a[8])],
      ]
    case 'attentionBackward':
    case 'flashAttentionBackward': {
      const [T, d, n] = name === 'attentionBackward' ? [a[9], a[11], a[8] * a[10]] : [a[11], a[13], a[10] * a[12]]
      const recompute = name === 'flashAttentionBackward' ? [[T, T, d, false, true, n]] : []
      return [...recompute, [T, d, T, true, false, n], [T, T, d, false, true, n], [T, d, T, false, false, n], [T, d, T, true, false, n]]
    }
    case 'residualLayerNormForward':
      return [[a[10], a[12], a[11], false, true, 1]]
    case 'residualLayerNormBackward':
      return [
        [a[14], a[15], a[16], false, false, 1],
        [a[16], a[15], a[14], true, false, 1],
      ]
    default:
      return []
  }
}

/** The addon's exports, each function timed and its products recorded. */
function wrap(exports) {
  real = exports
  const out = {}
  for (const name of Object.getOwnPropertyNames(exports)) {
    const f = exports[name] // the addon's properties are not enumerable
    if (typeof f !== 'function') continue
    out[name] = (...a) => {
      const t0 = performance.now()
      const r = f(...a) // spread-ok: an addon call, at most 19 arguments
      const e = calls.get(name) ?? {n: 0, ms: 0}
      e.n++
      e.ms += performance.now() - t0
      calls.set(name, e)
      for (const p of productsOf(name, a)) products.push(p)
      return r
    }
  }
  return out
}
const dlopen = process.dlopen
process.dlopen = (module, file, ...rest) => {
  dlopen.call(process, module, file, ...rest) // spread-ok: dlopen's optional flags argument
  if (String(file).endsWith(SPAN_ADDON)) module.exports = wrap(module.exports)
}

const tf = await import('@tensorflow/tfjs')
const {startNative, nativePoolStats} = await import('../dist/core/engine/native.js')
const {collate, toTensors} = await import('../dist/core/model/batch.js')
const {presetConfig} = await import('../dist/core/model/config.js')
const {SpanBertForPreTraining} = await import('../dist/core/model/pretraining.js')
const {AdamW} = await import('../dist/core/train/optim.js')
const {trainStep} = await import('../dist/core/train/step.js')
const {fusedCounts} = await import('../dist/core/engine/fused.js')
const {FUSED_KERNELS} = await import('../dist/core/engine/fused-kernels.js')
const {NATIVE_FUSED} = await import('../dist/core/engine/fused-native.js')
/** Fused kernels that run as their composite on native (no addon implementation): their inner kernels are profiled too. */
const compositeHere = new Set(Object.values(FUSED_KERNELS).filter((n) => !NATIVE_FUSED[n]))

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : dflt
}
const steps = opt('--steps', 3)
const threads = opt('--threads', 2)
const layers = opt('--layers', 0)
const flag = (name) => (argv.includes(name) ? (argv.splice(argv.indexOf(name), 1), true) : false)
const noFlash = flag('--no-flash') // the attention kernel that saves probs [B, A, T, T] (fused.cc), as before issue 32
const noResidual = flag('--no-residual') // SpanResidualLayerNorm as the composite chain, as before issue 32
const presets = (argv[0] ?? 'mini,base').split(',')
const {setNativeFlashAttention} = await import('../dist/core/engine/native-flash.js')
const {setNativeResidualLayerNorm} = await import('../dist/core/engine/native-residual.js')
setNativeFlashAttention(!noFlash)
setNativeResidualLayerNorm(!noResidual)
if (noResidual) for (const n of [FUSED_KERNELS.residualLayerNorm, FUSED_KERNELS.residualLayerNormGrad]) compositeHere.add(n)
const err = await startNative(threads)
if (err) throw new Error(`native: ${err}`)
const share = (x, total) => +(x / total).toFixed(3)
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

/** The recorded products replayed alone: ms (best of 2) and FLOPs. */
function replay(list) {
  let flops = 0
  const bufs = new Map()
  const buf = (n) => bufs.get(n) ?? bufs.set(n, new Float32Array(n).fill(0.5)).get(n)
  const once = () => {
    const t0 = performance.now()
    for (const [M, N, K, tA, tB, b] of list) real.matmul(buf(b * M * K), buf(b * K * N), buf(b * M * N + 1).subarray(0, b * M * N), b, b, M, N, K, tA, tB)
    return performance.now() - t0
  }
  for (const [M, N, K, , , b] of list) flops += 2 * M * N * K * b
  return {ms: Math.min(once(), once()), flops}
}

/** The step's products grouped by shape ([M, N, K, transA, transB, batch]), each group replayed alone: the ten slowest, with GFLOP/s. */
function byShape(list) {
  const groups = new Map()
  for (const p of list) {
    const key = p.join(',')
    groups.set(key, [...(groups.get(key) ?? []), p])
  }
  return [...groups.values()]
    .map((g) => {
      const r = replay(g)
      const [M, N, K, tA, tB, b] = g[0]
      return {
        shape: `${b > 1 ? `${b}×` : ''}[${M},${K}]${tA ? 'ᵀ' : ''}·[${K},${N}]${tB ? 'ᵀ' : ''}`,
        M,
        N,
        K,
        transA: tA,
        transB: tB,
        batch: b,
        calls: g.length,
        ms: +r.ms.toFixed(1),
        gflop_per_s: +(r.flops / r.ms / 1e6).toFixed(1),
      }
    })
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 10)
}

for (const preset of presets) {
  const B = preset === 'base' ? 8 : 16
  const config = presetConfig(preset, V, layers ? {num_hidden_layers: layers} : {})
  const model = SpanBertForPreTraining.init(config, 1)
  const rng = new Rng(7)
  const batch = toTensors(
    collate(
      Array.from({length: B}, () => syntheticExample(128, rng)),
      {padId: 0, maxTargets: 15, maxPositions: 512},
    ),
  )
  const optim = new AdamW()
  const step = () => trainStep(model, optim, batch, 1e-4, {training: true, rng})
  for (let i = 0; i < 2; i++) step() // warm-up: kernels registered, the pool filled
  const walls = []
  const pool0 = nativePoolStats()
  const tensors0 = tf.memory().numTensors
  calls.clear()
  for (let i = 0; i < steps; i++) {
    products = []
    const t0 = performance.now()
    step()
    walls.push(performance.now() - t0)
  }
  const pool1 = nativePoolStats()
  const wall = median(walls)
  const addon = [...calls]
    .map(([name, e]) => ({name, calls: e.n / steps, ms: +(e.ms / steps).toFixed(1), share: share(e.ms / steps, wall)}))
    .sort((a, b) => b.ms - a.ms)
  const gemm = replay(products)
  let profWall = 0
  const prof = await tf.profile(() => {
    const t0 = performance.now()
    step()
    profWall = performance.now() - t0
  })
  const by = new Map()
  for (const k of prof.kernels) {
    const e = by.get(k.name) ?? {calls: 0, ms: 0}
    e.calls++
    e.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0
    by.set(k.name, e)
  }
  // a fused kernel the addon does not implement runs its composite, whose kernels tf.profile lists too: count those once
  const kernelMs = [...by].filter(([name]) => !compositeHere.has(name)).reduce((s, [, e]) => s + e.ms, 0)
  const kernels = [...by].map(([name, e]) => ({name, calls: e.calls, ms: +e.ms.toFixed(1), share: share(e.ms, profWall)})).sort((a, b) => b.ms - a.ms) // shares of the profiled step
  const flopsModel = stepFlops(config, batch)
  const line = {
    bench: 'profile_step',
    preset,
    flash_attention: !noFlash,
    native_residual_layernorm: !noResidual,
    batch: `${B}x128`,
    threads,
    steps,
    step_ms: +wall.toFixed(0),
    step_ms_each: walls.map((w) => +w.toFixed(0)),
    gemm: {
      products: products.length,
      gflop: +(gemm.flops / 1e9).toFixed(2),
      replay_ms: +gemm.ms.toFixed(0),
      share: share(gemm.ms, wall),
      gflops_alone: +(gemm.flops / gemm.ms / 1e6).toFixed(1),
      gflops_over_step: +(gemm.flops / wall / 1e6).toFixed(1),
    },
    other_share: share(wall - gemm.ms, wall),
    dispatch: {
      kernels: prof.kernels.length,
      composite_here: [...compositeHere].filter((n) => by.has(n)),
      profiled_step_ms: +profWall.toFixed(0),
      kernel_ms: +kernelMs.toFixed(0),
      outside_kernels_share: share(profWall - kernelMs, profWall),
      us_per_kernel_outside: +(((profWall - kernelMs) / prof.kernels.length) * 1000).toFixed(1),
    },
    allocations: {
      pool_new_buffers: (pool1.allocated - pool0.allocated) / steps,
      pool_reused: (pool1.reused - pool0.reused) / steps,
      tf_new_tensors: prof.newTensors,
      tf_peak_mib: +(prof.peakBytes / 2 ** 20).toFixed(0),
      leaked_tensors: tf.memory().numTensors - tensors0,
    },
    tt_tensor_mib: +((B * config.num_attention_heads * 128 * 128 * 4) / 2 ** 20).toFixed(1), // one [B, A, T, T] fp32 tensor: what flash attention does not keep per layer
    model_flops_gflop: +(flopsModel / 1e9).toFixed(2),
    fused: fusedCounts(),
    load: (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  }
  console.log(JSON.stringify(line))
  console.log(JSON.stringify({bench: 'profile_step_kernels', preset, top: kernels.slice(0, 15)}))
  console.log(JSON.stringify({bench: 'profile_step_addon', preset, calls: addon.slice(0, 15)}))
  console.log(JSON.stringify({bench: 'profile_step_products', preset, gemm_path: real.info().gemmPath, shapes: byShape(products)}))
  model.dispose()
  tf.dispose(Object.values(batch).filter((t) => t instanceof tf.Tensor))
}
