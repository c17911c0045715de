#!/usr/bin/env node
// The native backend (span's addon: BLAS GEMM + native kernels registered on tfjs' cpu backend)
// against wasm. Plain JS over dist/:
//   npm run build && node bench/native.mjs [presets] [backends] [--threads N]
//   presets default tiny,mini (add base: batch 8 × 128, native only); backends default native,wasm;
//   --only step|sgemm runs just that part; --precision fp32|bf16 the matrix products' precision on
//   native (bf16: operands rounded to bf16, fp32 accumulation, as `--precision bf16`)
// Prints one JSON line per measurement:
//   sgemm     1024³ sgemm through the addon, GFLOP/s at 1 thread and at the pool size
//   step      tokens/s of a full training step (trainStep: forward, backward, clipping, AdamW),
//             median of 3 after a warm-up step, batch 16 × 128 (base: 8 × 128), BERT's 30,522 vocabulary;
//             step_cpu_ms is the CPU time of the process (all its threads) per step, steadier when shared;
//             max_rss_mb the process's peak RSS so far (run one preset alone to read its own)
//   dropout   a [16, 128, 4H] dropout: tf.dropout (JS mask, then a multiply) vs dropoutFused (the SpanDropout kernel: one pass)
//   adamw     one AdamW update of every parameter: the optimiser's ops on tfjs' cpu kernels vs
//             adamwFused (the SpanAdamW kernel: one pass, in place)
// Compare with bench/torch_step.py (PyTorch, same model and batch) for the ratio. On a shared
// machine figures are noisy: run it when the cores are idle.
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../dist/core/data/rng.js'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {initBackend} from '../dist/core/engine/index.js'
import {adamwFused, dropoutFused} from '../dist/core/engine/fused.js'
import {loadNative, nativeAddon, nativePoolStats, setNativeKernelsEnabled, startNative} from '../dist/core/engine/native.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {AdamW} from '../dist/core/train/optim.js'
import {trainStep} from '../dist/core/train/step.js'

const argv = process.argv.slice(2)
const ti = argv.indexOf('--threads')
const threads = ti >= 0 ? Number(argv.splice(ti, 2)[1]) : undefined
const oi = argv.indexOf('--only') // --only step|sgemm: one part (bench/vs-torch.mjs runs them apart)
const only = oi >= 0 ? argv.splice(oi, 2)[1] : null
const pi = argv.indexOf('--precision')
const precision = pi >= 0 ? argv.splice(pi, 2)[1] : 'fp32'
const presets = (argv[0] ?? 'tiny,mini').split(',')
const backends = (argv[1] ?? 'native,wasm').split(',')
const T = 128
const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const out = (o) => console.log(JSON.stringify(o))

/** Masked example as bench/train.mjs draws them: spans of 1–5 tokens until 15% is masked. */
async function start(backend) {
  if (backend === 'native') {
    const why = await startNative(threads)
    if (why) throw new Error(`native: ${why}`)
    nativeAddon().setPrecision(precision)
  } else {
    await initBackend(backend)
  }
}

function sgemm() {
  const addon = nativeAddon()
  const n = 1024
  const a = Float32Array.from({length: n * n}, () => Math.random() - 0.5)
  const b = Float32Array.from({length: n * n}, () => Math.random() - 0.5)
  const c = new Float32Array(n * n)
  const pool = loadNative().threads
  for (const th of [...new Set([1, pool])]) {
    addon.setThreads(th)
    addon.matmul(a, b, c, 1, 1, n, n, n, false, false)
    const times = []
    for (let i = 0; i < 7; i++) {
      const t0 = performance.now()
      addon.matmul(a, b, c, 1, 1, n, n, n, false, false)
      times.push(performance.now() - t0)
    }
    out({bench: 'sgemm', n, threads: th, blas: loadNative().blas, ms: +median(times).toFixed(2), gflop_per_s: +((2 * n ** 3) / (median(times) / 1000) / 1e9).toFixed(1)})
  }
  addon.setThreads(pool)
}

function stepBench(backend, preset) {
  const B = preset === 'base' ? 8 : 16
  const model = SpanBertForPreTraining.init(presetConfig(preset, V), 1)
  const rng = new Rng(7)
  const host = collate(Array.from({length: B}, () => syntheticExample(T, rng)), {padId: 0, maxTargets: 15, maxPositions: 512})
  const batch = toTensors(host)
  const opt = new AdamW()
  const times = []
  const cpuTimes = []
  const cpuMs = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  for (let i = 0; i < 4; i++) {
    const [t0, c0] = [performance.now(), cpuMs()]
    trainStep(model, opt, batch, 1e-4, {training: true, rng})
    if (i > 0) times.push(performance.now() - t0)
    if (i > 0) cpuTimes.push(cpuMs() - c0)
  }
  const ms = median(times)
  const gflop = stepFlops(model.config, batch) / 1e9
  out({bench: 'step', gflop_per_step: +gflop.toFixed(2), gflop_per_s: +(gflop / (ms / 1000)).toFixed(1), backend, preset, precision: backend === 'native' ? precision : 'fp32', batch: `${B}x${T}`, step_ms: Math.round(ms), step_cpu_ms: Math.round(median(cpuTimes)), tokens_per_s: Math.round((B * T) / (ms / 1000)), max_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024), tensors: tf.memory().numTensors,
    ...(backend === 'native' ? {pool: nativePoolStats()} : {})})
  disposeBatch(batch)
  opt.dispose()
  model.dispose()
}

/**
 * Floating-point operations of the step's matrix products: forward 2·M·N·K for every product
 * (linears, attention scores and context, the tied decoders), backward twice that.
 */
function stepFlops(c, b) {
  const [H, I, T, V, P] = [c.hidden_size, c.intermediate_size, b.T, c.vocab_size, c.sbo.position_embedding_size]
  const BT = b.B * T
  const layer = 2 * BT * H * (4 * H + 2 * I) + 2 * 2 * b.B * T * T * H
  const mlm = 2 * b.nMlm * H * (H + V)
  const sbo = 2 * b.nSbo * H * (2 * H + P + H + V)
  return 3 * (c.num_hidden_layers * layer + mlm + sbo)
}

function timeIt(f, reps = 5) {
  f()
  const times = []
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now()
    f()
    times.push(performance.now() - t0)
  }
  return +median(times).toFixed(2)
}

function dropoutBench(H) {
  const x = tf.randomNormal([16, 128, 4 * H])
  const js = timeIt(() => tf.tidy(() => { tf.dropout(x, 0.1, undefined, 3).dataSync() }))
  const fast = timeIt(() => tf.tidy(() => { dropoutFused(x, 0.1, 3).dataSync() }))
  out({bench: 'dropout', shape: x.shape, tf_dropout_ms: js, native_one_pass_ms: fast})
  x.dispose()
}

function adamwBench(preset) {
  const model = SpanBertForPreTraining.init(presetConfig(preset, V), 1)
  const entries = model.params.entries()
  const grads = new Map(entries.map(([k, v]) => [k, tf.randomNormal(v.shape, 0, 1e-3)]))
  const opt = new AdamW()
  setNativeKernelsEnabled(false) // the SpanAdamW composite: separate ops on tfjs' own cpu kernels
  const ops = timeIt(() => opt.apply(entries, grads, 1e-4), 3)
  setNativeKernelsEnabled(true)
  const m = entries.map(([, v]) => tf.variable(tf.zerosLike(v)))
  const v2 = entries.map(([, v]) => tf.variable(tf.zerosLike(v)))
  const h = {lr: 1e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, bc1: 0.1, bc2: 0.001, gradScale: 1}
  const fast = timeIt(() => entries.forEach(([k, p], i) => adamwFused(p, m[i], v2[i], grads.get(k), h)), 3)
  out({bench: 'adamw', preset, params: model.params.size(), tfjs_ops_ms: ops, native_one_pass_ms: fast})
  tf.dispose([...grads.values(), ...m, ...v2])
  opt.dispose()
  model.dispose()
}

for (const backend of backends) {
  await start(backend)
  if (backend === 'native' && only !== 'step') sgemm()
  if (only === 'sgemm') continue
  for (const preset of presets) {
    if (preset === 'base' && backend !== 'native') continue // wasm: minutes per step
    stepBench(backend, preset)
  }
  if (backend === 'native' && only !== 'step') {
    dropoutBench(presetConfig(presets[0], V).hidden_size)
    adamwBench(presets[0])
  }
}
