#!/usr/bin/env node
// Kernel launches and cuBLASLt calls of one training step on the cuda backend (SPAN_CUDA_LIBS; the
// stand-ins do: counting needs no GPU), by kernel file, for docs/cuda-fused-kernels.md's before and
// after figures. Plain JS over dist/:
//   node bench/cuda-launches.mjs PRESET BxT
// Prints one JSON line: launches and GEMMs of the whole step (forward with dropout, backward,
// clipping, AdamW), per encoder layer, and by file.
import {Rng} from '../dist/core/data/rng.js'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {initBackend} from '../dist/core/engine/index.js'
import {CudaBackend} from '../dist/core/engine/cuda/backend.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {AdamW} from '../dist/core/train/optim.js'
import {trainStep} from '../dist/core/train/step.js'

const [preset = 'tiny', shape = '2x16'] = process.argv.slice(2)
const [B, T] = shape.split('x').map(Number)
const byFile = {}
let counting = false
const wrap = (name, key) => {
  const f = CudaBackend.prototype[name]
  CudaBackend.prototype[name] = function (...a) {
    if (counting) byFile[key(a)] = (byFile[key(a)] ?? 0) + 1
    return f.apply(this, a)
  }
}
wrap('launch', (a) => a[0])
wrap('gemm', () => 'cublasLt')

await initBackend('cuda')
const config = presetConfig(preset, V)
const model = SpanBertForPreTraining.init(config, 1)
const rng = new Rng(7)
const batch = toTensors(
  collate(
    Array.from({length: B}, () => syntheticExample(T, rng)),
    {padId: 0, maxTargets: 15, maxPositions: 512},
  ),
)
const opt = new AdamW()
trainStep(model, opt, batch, 1e-4, {training: true, rng}) // the first step compiles; count the second
counting = true
trainStep(model, opt, batch, 1e-4, {training: true, rng})
counting = false
const gemms = byFile.cublasLt ?? 0
const launches = Object.entries(byFile).reduce((n, [k, v]) => n + (k === 'cublasLt' ? 0 : v), 0)
const L = config.num_hidden_layers
console.log(JSON.stringify({bench: 'cuda_launches', preset, batch: shape, layers: L, launches, gemms, byFile}))
disposeBatch(batch)
model.dispose()
