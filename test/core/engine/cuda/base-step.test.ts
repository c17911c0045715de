import {afterAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {fallbackCounts, resetFallbackCounts} from '../../../../src/core/engine/cuda/register.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {type StepData, hostStep} from './pretrain-step.js'

// A small-batch `base` pre-training step (issue 20): `base`'s shape (hidden 768, 12 heads of 64,
// intermediate 3072, MLM + SBO, all 12 layers unless SPAN_BASE_STEP_LAYERS says fewer) at batch 2 × length 16 and a 1000-token vocabulary,
// fp32, no dropout, on the cuda backend over the stand-in device against native: the loss and
// every gradient within 1e-4 relative (of each tensor's largest magnitude).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const VOCAB = 1000
const LAYERS = Number(process.env.SPAN_BASE_STEP_LAYERS ?? 12) // 2 layers took 0.6 s native + 1.1 s on the emulator on an idle CI machine
const config = presetConfig('base', VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0, num_hidden_layers: LAYERS})

const DATA: StepData = {
  seed: 11,
  shapes: [
    [2, 6],
    [8, 11],
  ],
  vocab: VOCAB,
}
const step = () => hostStep(config, 3, DATA)

describe.skipIf(skip)('a small-batch base step on cuda (stand-in) equals native', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  it(`loss and every gradient within 1e-4 relative (base shape, ${LAYERS} layers, B 2, T 16)`, async () => {
    await initBackend('native')
    const want = step()
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    resetFallbackCounts()
    const got = step()
    console.log(`base step (${LAYERS} layers, B 2, T 16, vocab ${VOCAB}): native ${want.ms.toFixed(0)} ms, cuda stand-in ${got.ms.toFixed(0)} ms`)
    expect(fallbackCounts(), 'kernels through the cpu fallback').toEqual({})
    expect(Math.abs(got.loss - want.loss) / Math.abs(want.loss)).toBeLessThan(1e-4)
    expect([...got.grads.keys()].sort()).toEqual([...want.grads.keys()].sort())
    const off: Record<string, number> = {}
    for (const [name, w] of want.grads) {
      const g = got.grads.get(name)!
      // the attention key bias's gradient is 0 but for rounding (softmax ignores a constant per row): measured against the query bias's
      const ref = name.endsWith('attention.self.key.bias') ? want.grads.get(name.replace('.key.', '.query.'))! : w
      const scale = [w, ref].reduce((m, t) => t.reduce((mm, x) => Math.max(mm, Math.abs(x)), m), 1e-6)
      const err = g.reduce((m, x, i) => Math.max(m, Math.abs(x - w[i]) / scale), 0)
      if (!(err < 1e-4)) off[name] = err
    }
    expect(off, `gradients off native by 1e-4 relative or more: ${JSON.stringify(off)}`).toEqual({})
  }, 120_000)
})
