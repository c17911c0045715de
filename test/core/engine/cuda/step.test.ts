import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {fallbackCounts, resetFallbackCounts} from '../../../../src/core/engine/cuda/register.js'
import {disposeBatch} from '../../../../src/core/model/batch.js'
import {EVAL} from '../../../../src/core/model/layers.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {AdamW} from '../../../../src/core/train/optim.js'
import {trainStep} from '../../../../src/core/train/step.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {type StepData, hostStep, stepBatch} from './pretrain-step.js'

// A `tiny` pre-training step (batch 2, length 16, fp32, no dropout) on the cuda backend over the
// stand-in device against native: the loss and every gradient within 1e-4; then repeated AdamW
// steps leave the tensor count and the allocator's live bytes flat. span's fused kernels run as
// CUDA C (kernels-fused.ts, kernels-attention.ts; docs/cuda-fused-kernels.md).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const VOCAB = 1000
const config = presetConfig('tiny', VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})

const DATA: StepData = {
  seed: 7,
  shapes: [
    [3, 5],
    [9, 10],
  ],
  vocab: VOCAB,
}
const batch = () => stepBatch(config, DATA)
const step = () => hostStep(config, 1, DATA)

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
