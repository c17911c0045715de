#!/usr/bin/env node
// Throughput of one full pre-training step (forward, backward, clipping, AdamW: what
// `span pretrain` runs per step: trainStep, through the shared optimiserStep and pretrainLoss) for the tiny and mini presets at
// batch 16 × 128 on each backend (cpu only for tiny: it is slow). Plain JS over dist/:
//   npm run build && node bench/train.mjs [backends…]     (default: wasm cpu)
// Synthetic masked examples over BERT's 30,522-word vocabulary: spans of 1–5 tokens until 15%
// of each block is masked (SBO targets where the span is inside the block). Median of 3 steps
// after one warm-up.
//
// FLOPs per step (multiply–add = 2 FLOPs; backward = 2 × forward, so training = 3 × forward):
//   encoder matmuls   6 · P_enc · B·T          P_enc = L·(4H² + 2·H·I)   (Q, K, V, O; FFN in, out)
//   attention         12 · L · B · T² · H      (QKᵀ and P·V: 2·2·T²·H forward per layer and sequence)
//   MLM head          6 · N_mlm · (H² + H·V)   (transform, tied decoder)
//   SBO head          6 · N_sbo · ((2H+200)·H + H² + H·V)
// Embedding lookups, LayerNorm, softmax, GeLU and AdamW are not counted (memory-bound).
import * as tf from '@tensorflow/tfjs'
import {Rng} from '../dist/core/data/rng.js'
import {V, syntheticExample} from './lib/synthetic.mjs'
import {initBackend} from '../dist/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../dist/core/model/batch.js'
import {presetConfig} from '../dist/core/model/config.js'
import {SpanBertForPreTraining} from '../dist/core/model/pretraining.js'
import {AdamW} from '../dist/core/train/optim.js'
import {trainStep} from '../dist/core/train/step.js'

const wanted = process.argv.slice(2)
const backends = wanted.length ? wanted : ['wasm', 'cpu']
const B = 16
const T = 128

function flops(c, nMlm, nSbo) {
  const {num_hidden_layers: L, hidden_size: H, intermediate_size: I} = c
  const enc = 6 * L * (4 * H * H + 2 * H * I) * B * T
  const attn = 12 * L * B * T * T * H
  const mlm = 6 * nMlm * (H * H + H * V)
  const sbo = 6 * nSbo * ((2 * H + c.sbo.position_embedding_size) * H + H * H + H * V)
  return enc + attn + mlm + sbo
}

function step(model, opt, batch, rng) {
  trainStep(model, opt, batch, 1e-4, {training: true, rng}, 1.0)
}

const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)]

for (const backend of backends) {
  await initBackend(backend)
  for (const preset of backend === 'cpu' ? ['tiny'] : ['tiny', 'mini']) {
    const config = presetConfig(preset, V)
    const model = SpanBertForPreTraining.init(config, 1)
    const rng = new Rng(7)
    const host = collate(Array.from({length: B}, () => syntheticExample(T, rng)), {padId: 0, maxTargets: 15, maxPositions: 512})
    const batch = toTensors(host)
    const opt = new AdamW()
    const times = []
    for (let i = 0; i < 4; i++) {
      const t0 = performance.now()
      step(model, opt, batch, rng)
      if (i > 0) times.push(performance.now() - t0)
    }
    const ms = median(times)
    const f = flops(config, host.mlmPos.length, host.sboLeft.length)
    console.log(JSON.stringify({backend: tf.getBackend(), preset, batch: `${B}x${T}`, vocab: V, params: model.params.size(),
      step_ms: Math.round(ms), tokens_per_s: Math.round((B * T) / (ms / 1000)), gflop_per_step: +(f / 1e9).toFixed(2),
      gflop_per_s: +(f / 1e9 / (ms / 1000)).toFixed(2), tensors: tf.memory().numTensors}))
    disposeBatch(batch)
    opt.dispose()
    model.dispose()
  }
}
