// One real training step of a pre-training model on the cuda backend (optimiserStep: forward with
// dropout, backward, clipping, AdamW), measured by the caching allocator: the bytes live before the
// step (weights, AdamW's m and v, the batch), the step's peak (what the metrics NDJSON reports as
// peak_device_bytes), and the bytes live when the backward pass reaches the last layer's attention
// (the saved activations), and those live when the forward pass has made the loss. Shared by bench/cuda-attention-memory.mjs and bench/cuda-decoder-memory.mjs.
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../dist/core/data/rng.js'
import {cudaKernelOf, registerCudaKernel} from '../../dist/core/engine/cuda/kernel-table.js'
import {setFlashAttention} from '../../dist/core/engine/cuda/kernels-flash-attention.js'
import {setCudaOptions} from '../../dist/core/engine/cuda/backend.js'
import {collate, disposeBatch, toTensors} from '../../dist/core/model/batch.js'
import {presetConfig} from '../../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../../dist/core/model/pretraining.js'
import {AdamW} from '../../dist/core/train/optim.js'
import {optimiserStep} from '../../dist/core/train/step.js'
import {initBackend} from '../../dist/core/engine/index.js'
import {V, syntheticExample} from './synthetic.mjs'

export const MiB = (b) => +(b / 2 ** 20).toFixed(1)

/** The value after `name` on the command line, else `dflt`. */
export function opt(name, dflt) {
  const i = process.argv.indexOf(name, 2)
  return i >= 0 ? process.argv[i + 1] : dflt
}

/** Starts the cuda backend; where it cannot start, says why and how to get the stand-in device, and exits 0 (the bench is skipped). */
export async function cudaOrSkip(bench) {
  try {
    await initBackend('cuda')
  } catch (e) {
    console.log(`${bench}: skipped (${e.message}; SPAN_CUDA_LIBS=$(npm run -s standins | tail -1) for the stand-in device)`)
    process.exit(0)
  }
}

/** B synthetic masked examples of length T (15 % masked in spans, as bench/lib/synthetic.mjs makes them) in a vocabulary of `vocab`. */
export function examples(B, T, vocab = V, seed = 7) {
  const rng = new Rng(seed)
  return Array.from({length: B}, () => syntheticExample(T, rng)).map((e) => ({
    ...e,
    ids: e.ids.map((id) => (id < 200 ? id : id % vocab)),
    targets: e.targets.map(([i, id]) => [i, id % vocab]),
  }))
}

export const tensorBatch = (exs) => toTensors(collate(exs, {padId: 0, maxTargets: 15, maxPositions: 512}))

// Live bytes when the backward pass reaches its first attention gradient (the last layer's), and
// when the forward pass has made the loss (every saved activation live, the decoders' logits too
// when they are kept whole).
let atBackward = null
let atForwardEnd = null
let hooked = false
function hookAttentionGrad() {
  if (hooked) return
  hooked = true
  const own = cudaKernelOf('SpanAttentionGrad')
  registerCudaKernel('SpanAttentionGrad', (a) => {
    atBackward ??= tf.memory().liveBytes
    return own(a)
  })
}

/** One optimiser step of `model` on `batch` through trainingTerms with the decoders chunked past `chunkAbove` logit floats. */
function step(model, opt, batch, chunkAbove, seed) {
  const ctx = {training: true, rng: new Rng(seed)}
  const loss = () => {
    const total = model.trainingTerms(batch, ctx, undefined, chunkAbove).total
    atForwardEnd = tf.memory().liveBytes
    return total
  }
  return optimiserStep(model.params, opt, [() => ({loss})], 1e-4, 1.0)
}

/**
 * The allocator's figures of one steady-state step: a fresh model and AdamW at `precision` with the
 * fused attention on or off (`flash`), one warm-up step on a 1×16 batch first (AdamW's m and v
 * exist from then on, as at every step after a run's first), then the measured step on B×T.
 */
export function measureStep({preset, B, T, layers, precision, flash, chunkAbove, vocab = V}) {
  hookAttentionGrad()
  setCudaOptions({precision})
  setFlashAttention(flash)
  const backend = tf.backend()
  const model = SpanBertForPreTraining.init(presetConfig(preset, vocab, {num_hidden_layers: layers}), 1)
  const opt = new AdamW()
  const warm = tensorBatch(examples(1, 16, vocab, 3))
  step(model, opt, warm, chunkAbove, 1)
  disposeBatch(warm)
  const batch = tensorBatch(examples(B, T, vocab))
  backend.dev.rt.sync()
  backend.takePeakBytes()
  const before = tf.memory().liveBytes
  atBackward = null
  const t0 = performance.now()
  const out = step(model, opt, batch, chunkAbove, 5)
  backend.dev.rt.sync()
  const seconds = (performance.now() - t0) / 1000
  const peak = backend.takePeakBytes()
  const counts = {B: batch.B, T: batch.T, nMlm: batch.nMlm, nSbo: batch.nSbo}
  disposeBatch(batch)
  opt.dispose()
  model.dispose()
  const forward = atForwardEnd - before
  return {before, peak, saved: atBackward === null ? NaN : atBackward - before, forward, seconds, loss: out.losses[0], counts, config: model.config}
}
