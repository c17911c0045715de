// Per-kernel time of one training step (tf.profile), for finding what to make native next.
//   node bench/lib/profile-step.mjs [preset] [backend]      (npm run build first)
// tf.profile sees the kernels the step dispatches, the fused ones by name (SpanLinear, …)
// and the gradient functions are not timed (node --cpu-prof attributes those). Environment:
// TOP=n lists the n slowest calls, AGG=Kernel totals one kernel by input shapes, SHAPES=Kernel
// lists its calls.
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../dist/core/data/rng.js'
import {V, syntheticExample} from './synthetic.mjs'
import {initBackend} from '../../dist/core/engine/index.js'
import {startNative} from '../../dist/core/engine/native.js'
import {collate, toTensors} from '../../dist/core/model/batch.js'
import {presetConfig} from '../../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../../dist/core/model/pretraining.js'
import {AdamW} from '../../dist/core/train/optim.js'
import {trainStep} from '../../dist/core/train/step.js'

const preset = process.argv[2] ?? 'tiny'
const backend = process.argv[3] ?? 'native'
if (backend === 'native') await startNative(); else await initBackend(backend)
const B = preset === 'base' ? 8 : 16
const model = SpanBertForPreTraining.init(presetConfig(preset, V), 1)
const rng = new Rng(7)
const batch = toTensors(collate(Array.from({length: B}, () => syntheticExample(128, rng)), {padId: 0, maxTargets: 15, maxPositions: 512}))
const opt = new AdamW()
for (let i = 0; i < 2; i++) trainStep(model, opt, batch, 1e-4, {training: true, rng})
const t0 = performance.now()
const prof = await tf.profile(() => { trainStep(model, opt, batch, 1e-4, {training: true, rng}) })
const wall = performance.now() - t0
const by = new Map()
for (const k of prof.kernels) {
  const key = k.name
  const e = by.get(key) ?? {n: 0, ms: 0}
  e.n++; e.ms += typeof k.kernelTimeMs === 'number' ? k.kernelTimeMs : 0
  by.set(key, e)
}
const rows = [...by].sort((a, b) => b[1].ms - a[1].ms)
let sum = 0
for (const [, e] of rows) sum += e.ms
console.log(`${preset} ${backend}: wall ${wall.toFixed(0)} ms (profiled), kernels ${prof.kernels.length}, kernel ms ${sum.toFixed(0)}`)
for (const [k, e] of rows.slice(0, 40)) console.log(`${k.padEnd(28)} ${String(e.n).padStart(5)} ${e.ms.toFixed(1).padStart(8)}`)
if (process.env.SHAPES) for (const k of prof.kernels.filter((k) => k.name === process.env.SHAPES)) console.log(JSON.stringify(k.inputShapes), (k.kernelTimeMs).toFixed?.(2))
if (process.env.TOP) {
  const top = prof.kernels.filter((k) => typeof k.kernelTimeMs === 'number').sort((a, b) => b.kernelTimeMs - a.kernelTimeMs).slice(0, Number(process.env.TOP))
  for (const k of top) console.log(k.name.padEnd(20), k.kernelTimeMs.toFixed(2).padStart(7), JSON.stringify(k.inputShapes), JSON.stringify(k.outputShapes))
}
if (process.env.AGG) {
  const m = new Map()
  for (const k of prof.kernels.filter((k) => k.name === process.env.AGG)) {
    const key = JSON.stringify(k.inputShapes); const e = m.get(key) ?? {n: 0, ms: 0}; e.n++; e.ms += k.kernelTimeMs; m.set(key, e)
  }
  for (const [k, e] of [...m].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)) console.log(String(e.n).padStart(4), e.ms.toFixed(1).padStart(7), k)
}
