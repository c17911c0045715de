#!/usr/bin/env node
// Forward+backward time of the model on each backend. Plain JS over dist/:
//   npx tsc -p tsconfig.build.json && node bench/model-step.mjs [preset] [batch] [len] [backends…]
// Defaults: tiny preset, batch 16 × 128 tokens, BERT's 30,522-word vocabulary, objectives
// mlm,sbo, dropout on; wasm unless backends are named (cpu is pure JS: ~70 s a step at
// 16 × 128 even on a quiet machine; tensorflow where tfjs-node is installed). Synthetic
// masked examples: spans of 1–5 tokens until 15% of each block is masked. Prints ms per
// forward+backward (lossAndGrads) and per full step (with clipping and AdamW), median of
// REPS (default 3) after one warm-up step, as wall-clock and as CPU time of this process (the backends run
// single-threaded here, so on a shared machine the CPU figure is the steadier one).
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../dist/core/data/rng.js'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {initBackend} from '../dist/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {AdamW} from '../dist/core/train/optim.js'
import {lossAndGrads, trainStep} from '../dist/core/train/step.js'

const [preset = 'tiny', B = '16', T = '128', ...wanted] = process.argv.slice(2)
const backends = wanted.length ? wanted : ['wasm']

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

for (const backend of backends) {
  await initBackend(backend)
  const config = presetConfig(preset, V)
  const model = SpanBertForPreTraining.init(config, 1)
  const rng = new Rng(7)
  const host = collate(Array.from({length: Number(B)}, () => syntheticExample(Number(T), rng)), {padId: 0, maxTargets: 15, maxPositions: 512})
  const batch = toTensors(host)
  const opt = new AdamW()
  const fb = []
  const fbCpu = []
  const step = []
  const stepCpu = []
  const cpuMs = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1000
  }
  for (let i = 0; i <= Number(process.env.REPS ?? 3); i++) {
    let [t0, c0] = [performance.now(), cpuMs()]
    const {grads} = lossAndGrads(model, batch, {training: true, rng})
    tf.dispose([...grads.values()])
    if (i > 0) fb.push(performance.now() - t0)
    if (i > 0) fbCpu.push(cpuMs() - c0)
    ;[t0, c0] = [performance.now(), cpuMs()]
    trainStep(model, opt, batch, 1e-4, {training: true, rng})
    if (i > 0) step.push(performance.now() - t0)
    if (i > 0) stepCpu.push(cpuMs() - c0)
  }
  console.log(JSON.stringify({backend: tf.getBackend(), preset, batch: `${B}x${T}`, params: model.params.size(), n_mlm: host.mlmPos.length, n_sbo: host.sboLeft.length,
    fwd_bwd_ms: Math.round(median(fb)), fwd_bwd_cpu_ms: Math.round(median(fbCpu)), step_ms: Math.round(median(step)), step_cpu_ms: Math.round(median(stepCpu)), tensors: tf.memory().numTensors}))
  disposeBatch(batch)
  opt.dispose()
  model.dispose()
}
