#!/usr/bin/env node
// Activation memory of one training step's forward and backward pass on the cuda backend, with the
// simple attention path (probs [B, A, T, T] saved, dropout(P), Pd and dP as transients) and with the
// fused flash attention (only ctx and the row lse [B, A, T]), against the figure the T×T tensors
// take: B·A·T²·4 bytes each, the L saved probs, the zeros tfjs' backprop makes as the (unused)
// gradient of a layer's probs output, and the T×T transients of the layer's backward (dropout(P),
// dP) (issue 21 item 6). fp32. Plain JS over dist/ (npm run build first):
//   SPAN_CUDA_LIBS=$(npm run -s standins | tail -1) node bench/attention-memory.mjs [PRESET] [BxT] [--layers L] [--vocab V]
// Defaults: base, 1x512, 2 layers, vocabulary 30522 (on the stand-in device a full base 16×512 step
// runs for hours: the per-layer T×T figure scales with B and L, and the script prints it for the
// shape asked and for base 16×512). On a GPU: node bench/attention-memory.mjs base 16x512 --layers 12.
// Prints one JSON line per mode and one summary line. The figures are the caching allocator's
// (size classes): peak bytes handed out during the step above the bytes live before it (weights, the
// batch), i.e. saved activations + gradients + the transients live at the peak.
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../dist/core/data/rng.js'
import {cudaKernelOf, registerCudaKernel} from '../dist/core/engine/cuda/kernel-table.js'
import {setFlashAttention} from '../dist/core/engine/cuda/kernels-flash-attention.js'
import {initBackend} from '../dist/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {lossAndGrads} from '../dist/core/train/step.js'
import {V, syntheticExample} from './lib/synthetic.mjs'

const argv = process.argv.slice(2)
const opt = (name, dflt) => {
  const i = argv.indexOf(name)
  return i >= 0 ? Number(argv.splice(i, 2)[1]) : dflt
}
const layers = opt('--layers', 2)
const vocab = opt('--vocab', V)
const [preset = 'base', shape = '1x512'] = argv
const [B, T] = shape.split('x').map(Number)
const MiB = (b) => +(b / 2 ** 20).toFixed(1)

try {
  await initBackend('cuda')
} catch (e) {
  console.log(`attention-memory: skipped (${e.message}; SPAN_CUDA_LIBS=$(npm run -s standins | tail -1) for the stand-in device)`)
  process.exit(0)
}
const config = presetConfig(preset, vocab, {num_hidden_layers: layers})
const A = config.num_attention_heads
const tt = B * A * T * T * 4 // one [B, A, T, T] fp32 tensor
const rng = new Rng(7)
const examples = Array.from({length: B}, () => syntheticExample(T, rng)).map((e) => ({
  ...e,
  ids: e.ids.map((id) => (id < 200 ? id : id % vocab)),
  targets: e.targets.map(([i, id]) => [i, id % vocab]),
}))

// Live bytes when the backward pass reaches its first attention layer (the last layer's): every
// activation the forward pass saved is live then (the backward has freed little so far).
let atBackward = null
const own = cudaKernelOf('SpanAttentionGrad')
registerCudaKernel('SpanAttentionGrad', (a) => {
  atBackward ??= tf.memory().liveBytes
  return own(a)
})

/** One forward + backward (dropout on) with the flash kernels on or off: the allocator's figures. */
function step(flash) {
  setFlashAttention(flash)
  const model = SpanBertForPreTraining.init(config, 1)
  const batch = toTensors(collate(examples, {padId: 0, maxTargets: 15, maxPositions: 512}))
  const backend = tf.backend()
  tf.backend().takePeakBytes()
  const before = tf.memory().liveBytes
  atBackward = null
  const t0 = performance.now()
  const {grads} = lossAndGrads(model, batch, {training: true, rng: new Rng(5)})
  backend.dev.rt.sync()
  const seconds = (performance.now() - t0) / 1000
  const peak = backend.takePeakBytes()
  tf.dispose([...grads.values()])
  disposeBatch(batch)
  model.dispose()
  return {before, peak, seconds, saved: atBackward - before}
}

const rows = {}
for (const [mode, flash] of [
  ['simple', false],
  ['flash', true],
]) {
  const r = step(flash)
  rows[mode] = r
  const line = {bench: 'attention_memory', mode, preset, batch: `${B}x${T}`, layers, heads: A, live_before_mib: MiB(r.before)}
  console.log(
    JSON.stringify({
      ...line,
      peak_mib: MiB(r.peak),
      step_above_weights_mib: MiB(r.peak - r.before),
      saved_at_backward_mib: MiB(r.saved),
      seconds: +r.seconds.toFixed(1),
    }),
  )
}
const base16 = 16 * 12 * 512 * 512 * 4
console.log(
  JSON.stringify({
    bench: 'attention_memory_summary',
    batch: `${B}x${T}`,
    layers,
    peak_saved_by_flash_mib: MiB(rows.simple.peak - rows.flash.peak),
    activations_saved_by_flash_mib: MiB(rows.simple.saved - rows.flash.saved),
    // the L saved probs, and the zeros tfjs' backprop makes as the gradient of the probs output of the layer it is in
    tt_saved_expected_mib: MiB((layers + 1) * tt),
    tt_tensor_mib: MiB(tt),
    tt_peak_expected_mib: MiB(2 * layers * tt), // at the backward pass's end: L saved probs + the L zeros tfjs made as their gradients (kept to the end)
    base_16x512_tt_tensor_mib: MiB(base16),
    base_16x512_12_layers_tt_mib: MiB(24 * base16),
  }),
)
