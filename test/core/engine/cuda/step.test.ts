import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../../src/core/data/rng.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {fallbackCounts, resetFallbackCounts} from '../../../../src/core/engine/cuda/register.js'
import {collate, disposeBatch, toTensors} from '../../../../src/core/model/batch.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {EVAL} from '../../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {AdamW} from '../../../../src/core/train/optim.js'
import {lossAndGrads, trainStep} from '../../../../src/core/train/step.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {example} from '../../model/helpers.js'

// A `tiny` pre-training step (batch 2, length 16, fp32, no dropout) on the cuda backend over the
// stand-in device against native: the loss and every gradient within 1e-4; then repeated AdamW
// steps leave the tensor count and the allocator's live bytes flat. span's fused kernels run as
// CUDA C (kernels-fused.ts, kernels-attention.ts; docs/cuda-fused-kernels.md).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const VOCAB = 1000
const config = presetConfig('tiny', VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})

function batch() {
  const rng = new Rng(7)
  const examples = [example(16, 3, 5, rng, VOCAB), example(16, 9, 10, rng, VOCAB)].map((e, i) => ({
    ...e,
    segments: e.ids.map((_, j) => (j < 8 ? 0 : 1)),
    next: i === 0,
  }))
  return toTensors(collate(examples, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings}))
}

/** Loss and gradients (host copies) of one step from seed-1 weights on the current backend. */
function step(): {loss: number; grads: Map<string, Float32Array>; ms: number} {
  const t0 = performance.now()
  const model = SpanBertForPreTraining.init(config, 1)
  const b = batch()
  const {parts, grads} = lossAndGrads(model, b, EVAL)
  const host = new Map([...grads].map(([k, g]) => [k, g.dataSync() as Float32Array]))
  tf.dispose([...grads.values()])
  disposeBatch(b)
  model.dispose()
  return {loss: parts[0], grads: host, ms: performance.now() - t0}
}

describe.skipIf(skip)('a tiny pretrain step on cuda (stand-in) equals native', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('loss and every gradient within 1e-4 relative', async () => {
    await initBackend('native')
    const want = step()
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    resetFallbackCounts()
    const got = step()
    console.log(
      `tiny step (B 2, T 16, vocab ${VOCAB}): native ${want.ms.toFixed(0)} ms, cuda stand-in ${got.ms.toFixed(0)} ms; cpu fallbacks ${JSON.stringify(fallbackCounts())}`,
    )
    expect(fallbackCounts(), 'kernels through the cpu fallback').toEqual({})
    expect(Math.abs(got.loss - want.loss) / Math.abs(want.loss)).toBeLessThan(1e-4)
    expect([...got.grads.keys()].sort()).toEqual([...want.grads.keys()].sort())
    for (const [name, w] of want.grads) {
      const g = got.grads.get(name)!
      const scale = w.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-6)
      const err = g.reduce((m, x, i) => Math.max(m, Math.abs(x - w[i]) / scale), 0)
      expect(err, name).toBeLessThan(1e-4)
    }
  })

  it('repeated AdamW steps: tensor count and live device bytes flat', async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    const model = SpanBertForPreTraining.init(config, 1)
    const opt = new AdamW({beta1: 0.9, beta2: 0.999, eps: 1e-6, weightDecay: 0.01})
    const b = batch()
    resetFallbackCounts()
    const live = () => (tf.memory() as unknown as {liveBytes: number}).liveBytes
    const seen: [number, number][] = []
    for (let i = 0; i < 3; i++) {
      trainStep(model, opt, b, 1e-4, EVAL, 1.0)
      seen.push([tf.memory().numTensors, live()])
    }
    console.log(`tensors and live bytes after each step ${JSON.stringify(seen)}; cpu fallbacks ${JSON.stringify(fallbackCounts())}`)
    expect(seen[2]).toEqual(seen[1])
    expect(fallbackCounts(), 'kernels through the cpu fallback').toEqual({})
    disposeBatch(b)
    opt.dispose()
    model.dispose()
  })
})
