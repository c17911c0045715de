#!/usr/bin/env node
// span's training step on the cuda backend (SPAN_CUDA_LIBS, SPAN_CUDA_PRECISION fp32|tf32|bf16|fp16,
// else the device's default: bf16 from compute capability 8.0, fp16 on 7.x; fp16 with span's dynamic
// loss scaling, fairseq's defaults, as span pretrain runs it), for
// tools/gpu-check.sh and bench/vs-torch-gpu.mjs. Plain JS over dist/:
//   node bench/cuda-step.mjs PRESET BxT STEPS [--vocab V]
// Runs STEPS full training steps (trainStep: forward with dropout, backward, clipping, AdamW) on one
// synthetic batch and prints one JSON line: median step ms (after the first), tokens/s, the
// allocator's live bytes and the tensor count after step 1, the middle step and the last
// (`flat`: the last equal to the middle), and the largest live bytes seen.
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../dist/core/data/rng.js'
import {stepFlops} from './lib/step-flops.mjs'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {backendPrecision, initBackend} from '../dist/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {AdamW} from '../dist/core/train/optim.js'
import {LOSS_SCALE_DEFAULTS, attachScaler, lossScaleOptions} from '../dist/core/train/loss-scale.js'
import {trainStep} from '../dist/core/train/step.js'

const argv = process.argv.slice(2)
const vi = argv.indexOf('--vocab')
const vocab = vi >= 0 ? Number(argv.splice(vi, 2)[1]) : V
const [preset = 'tiny', shape = '2x16', stepsArg = '3'] = argv
const [B, T] = shape.split('x').map(Number)
const steps = Number(stepsArg)

await initBackend('cuda')
const model = SpanBertForPreTraining.init(presetConfig(preset, vocab), 1)
const rng = new Rng(7)
const examples = Array.from({length: B}, () => syntheticExample(T, rng)).map((e) => ({
  ...e,
  ids: e.ids.map((id) => (id < 200 ? id : id % vocab)),
  targets: e.targets.map(([i, id]) => [i, id % vocab]),
}))
const batch = toTensors(collate(examples, {padId: 0, maxTargets: 15, maxPositions: 512}))
const opt = new AdamW()
attachScaler(opt, backendPrecision(), lossScaleOptions(LOSS_SCALE_DEFAULTS, 1, 1)) // fp16 only
const mem = () => tf.memory()
const watch = {}
const times = []
let peak = 0
for (let i = 1; i <= steps; i++) {
  const t0 = performance.now()
  const loss = trainStep(model, opt, batch, 1e-4, {training: true, rng})
  times.push(performance.now() - t0)
  const m = mem()
  peak = Math.max(peak, m.liveBytes ?? m.numBytes)
  if (i === 1 || i === Math.ceil(steps / 2) || i === steps)
    watch[i] = {live_bytes: m.liveBytes ?? m.numBytes, tensors: m.numTensors, loss: +loss.loss.toFixed(5)}
}
const rest = times.slice(1).sort((a, b) => a - b)
const ms = rest.length ? rest[Math.floor(rest.length / 2)] : times[0]
const mid = watch[Math.ceil(steps / 2)]
const last = watch[steps]
console.log(
  JSON.stringify({
    bench: 'cuda_step',
    preset,
    batch: `${B}x${T}`,
    vocab,
    steps,
    precision: backendPrecision(),
    step_ms: +ms.toFixed(2),
    gflop_per_step: +(stepFlops(model.config, batch) / 1e9).toFixed(2),
    tokens_per_s: Math.round((B * T) / (ms / 1000)),
    peak_live_mb: +(peak / 2 ** 20).toFixed(1),
    watch,
    flat: mid.live_bytes === last.live_bytes && mid.tensors === last.tensors,
    ...(opt.scaler ? {loss_scale: opt.scaler.read().scale, skipped_steps: opt.scaler.read().skipped} : {}),
  }),
)
disposeBatch(batch)
opt.dispose()
model.dispose()
