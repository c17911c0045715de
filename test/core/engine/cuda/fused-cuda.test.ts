import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type CudaKernel, cudaKernelOf, registerCudaKernel} from '../../../../src/core/engine/cuda/kernel-table.js'
import {setFlashAttention} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'
import {setNativeFlashAttention} from '../../../../src/core/engine/native-flash.js'
import {runFused} from '../../../../src/core/engine/fused-kernels.js'
import {fusedCounts} from '../../../../src/core/engine/fused.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {Rng} from '../../../../src/core/data/rng.js'
import {collate, disposeBatch, toTensors} from '../../../../src/core/model/batch.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {lossAndGrads} from '../../../../src/core/train/step.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {example} from '../../model/helpers.js'

// span's fused kernels on the cuda backend (src/core/engine/cuda/kernels-fused.ts,
// kernels-attention.ts; native/cuda/kernels) on the stand-in device, through tfjs, against the
// native backend's fused kernels (fused-native.ts) on the same inputs: within 1e-5 relative, the
// dropout masks identical, and every one run by its cuda kernel (not the composite formula).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function rand(n: number, seed: number, lo = -2, hi = 2): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo)
  })
}
const F = (shape: number[], seed: number, lo?: number, hi?: number) =>
  tf.tensor(
    rand(
      shape.reduce((a, b) => a * b, 1),
      seed,
      lo,
      hi,
    ),
    shape,
  )

const ran = new Set<string>()
type Case = () => {name: string; inputs: tf.NamedTensorMap; attrs?: tf.NamedAttrMap}

/** The kernel's outputs on cpu (native) and on cuda, compared; the cuda kernel itself must have run. */
async function same(c: Case, declines = false): Promise<void> {
  const outs = async (backend: string) => {
    await tf.setBackend(backend)
    return tf.tidy(() => {
      const {name, inputs, attrs} = c()
      return [runFused(name, inputs, attrs)].flat().map((t) => ({shape: t.shape, v: Array.from(t.dataSync())}))
    })
  }
  const before = fusedCounts()
  const want = await outs('cpu')
  if (!c().name.endsWith('Grad')) expect(fusedCounts(), 'the reference ran natively').not.toEqual(before)
  ran.clear()
  const got = await outs('cuda')
  expect([...ran], declines ? 'the composite ran' : 'the cuda kernel ran, not the composite').toEqual(declines ? [] : [c().name])
  expect(got.map((g) => g.shape)).toEqual(want.map((w) => w.shape))
  got.forEach((g, j) =>
    g.v.forEach((x, i) => {
      const w = want[j].v[i]
      if (Number.isNaN(w)) expect(x).toBeNaN()
      else expect(Math.abs(x - w) / Math.max(Math.abs(w), 1), `output ${j} element ${i}: ${x} vs ${w}`).toBeLessThanOrEqual(1e-5)
    }),
  )
}

describe.skipIf(skip)('fused kernels on the cuda stand-in device vs native', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native') // the reference: tfjs' cpu backend with the native fused kernels switched on
    await initBackend('cuda')
    for (const name of [
      'SpanLayerNorm',
      'SpanLayerNormGrad',
      'SpanCrossEntropy',
      'SpanCrossEntropyGrad',
      'SpanDropout',
      'SpanSumSquares',
      'SpanAdamW',
      'SpanLinear',
      'SpanLinearGrad',
      'SpanAttention',
      'SpanAttentionGrad',
      'SpanResidualLayerNorm',
      'SpanResidualLayerNormGrad',
    ]) {
      const own = cudaKernelOf(name) as CudaKernel
      expect(own, name).toBeDefined()
      registerCudaKernel(name, (a) => {
        const r = own(a)
        if (r) ran.add(name)
        return r
      })
    }
  })
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('LayerNorm and its gradient, odd rows and width, 3-D input', async () => {
    await same(() => ({name: 'SpanLayerNorm', inputs: {x: F([3, 5, 37], 1), g: F([37], 2), b: F([37], 3)}, attrs: {eps: 1e-12}}))
    await same(() => ({
      name: 'SpanLayerNormGrad',
      inputs: {dy: F([3, 5, 37], 6), x: F([3, 5, 37], 1), g: F([37], 2), mean: F([15], 4), rstd: F([15], 5, 0.5, 2)},
    }))
  })

  it('empty inputs: the cuda kernels decline and the composite gives native’s result', async () => {
    await same(() => ({name: 'SpanLayerNorm', inputs: {x: F([0, 8], 1), g: F([8], 2), b: F([8], 3)}, attrs: {eps: 1e-12}}), true)
    await same(() => ({name: 'SpanCrossEntropy', inputs: {logits: F([0, 5], 7), labels: tf.tensor1d([], 'int32')}}), true)
    await same(() => ({name: 'SpanSumSquares', inputs: {a: F([0], 10), b: F([3], 11)}}))
  })

  it('cross-entropy and its gradient', async () => {
    const labels = () => tf.tensor1d([0, 12, 99, 5, 50, 3, 7], 'int32')
    await same(() => ({name: 'SpanCrossEntropy', inputs: {logits: F([7, 101], 7, -5, 5), labels: labels()}}))
    await same(() => ({name: 'SpanCrossEntropyGrad', inputs: {dy: tf.scalar(0.7), logits: F([7, 101], 7, -5, 5), labels: labels(), lse: F([7], 8, 4, 6)}}))
  })

  it('dropout draws the same mask as native', async () => {
    await same(() => ({name: 'SpanDropout', inputs: {x: F([33, 31], 9)}, attrs: {rate: 0.3, seed: 1234}}))
  })

  it('sum of squares over several tensors and AdamW with clipping and decay', async () => {
    await same(() => ({name: 'SpanSumSquares', inputs: {a: F([1001], 10), b: F([3, 7], 11), c: F([70000], 12)}}))
    const attrs = {lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, bc1: 1 - 0.9 ** 3, bc2: 1 - 0.999 ** 3, gradScale: 0.4}
    await same(() => ({name: 'SpanAdamW', inputs: {p: F([1001], 13), m: F([1001], 14, -0.01, 0.01), v: F([1001], 15, 0, 0.001), g: F([1001], 16)}, attrs}))
  })

  it('Linear with and without GeLU, and its gradients', async () => {
    for (const activation of ['gelu', 'linear']) {
      await same(() => ({name: 'SpanLinear', inputs: {x: F([9, 13], 17), w: F([11, 13], 18), b: F([11], 19)}, attrs: {activation}}))
      await same(() => ({name: 'SpanLinearGrad', inputs: {dy: F([9, 11], 20), x: F([9, 13], 17), w: F([11, 13], 18), z: F([9, 11], 21)}, attrs: {activation}}))
    }
  })

  it('bias + dropout + residual + LayerNorm after the GEMM (native’s mask), and its gradient, odd sizes past one 32-row chunk', async () => {
    for (const rate of [0, 0.25]) {
      const attrs = {eps: 1e-12, rate, seed: 99}
      const ins = () => ({x: F([37, 13], 30), w: F([19, 13], 31, -0.5, 0.5), b: F([19], 32), g: F([19], 33, 0.5, 1.5)})
      await same(() => ({name: 'SpanResidualLayerNorm', inputs: {...ins(), residual: F([37, 19], 34), beta: F([19], 35)}, attrs}))
      const saved = () => ({s: F([37, 19], 36), mean: F([37], 37, -0.3, 0.3), rstd: F([37], 38, 0.5, 2)})
      await same(() => ({name: 'SpanResidualLayerNormGrad', inputs: {dy: F([37, 19], 39), ...ins(), ...saved()}, attrs}))
    }
  })

  it('attention with padding and dropout, and its gradient', async () => {
    const mask = () =>
      tf.tensor2d([
        [0, 0, 0, 0, 0, -10000, -10000],
        [0, 0, 0, 0, 0, 0, 0],
      ])
    // the simple path (probs [B, A, T, T] saved) on both sides; the fused path is test/core/engine/cuda/flash-attention.test.ts
    const was = setFlashAttention(false)
    const wasNative = setNativeFlashAttention(false)
    for (const rate of [0, 0.2]) {
      const attrs = {heads: 3, rate, seed: 77}
      await same(() => ({name: 'SpanAttention', inputs: {q: F([2, 7, 12], 22), k: F([2, 7, 12], 23), v: F([2, 7, 12], 24), mask: mask()}, attrs}))
      const probs = () => tf.softmax(F([2, 3, 7, 7], 25, -3, 3))
      await same(() => ({
        name: 'SpanAttentionGrad',
        inputs: {dy: F([2, 7, 12], 26), q: F([2, 7, 12], 22), k: F([2, 7, 12], 23), v: F([2, 7, 12], 24), probs: probs()},
        attrs,
      }))
    }
    setFlashAttention(was)
    setNativeFlashAttention(wasNative)
  })

  it('a tiny pretrain step WITH dropout runs every forward fused kernel on the device and equals native (same masks)', async () => {
    const config = presetConfig('tiny', 1000, {hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1})
    const step = async (backend: string) => {
      await tf.setBackend(backend)
      const model = SpanBertForPreTraining.init(config, 1)
      const rng = new Rng(3)
      const ex = [example(16, 3, 5, rng, 1000), example(16, 9, 10, rng, 1000)].map((e, i) => ({
        ...e,
        segments: e.ids.map((_, j) => (j < 8 ? 0 : 1)),
        next: i === 0,
      }))
      const b = toTensors(collate(ex, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings}))
      const {parts, grads} = lossAndGrads(model, b, {training: true, rng: new Rng(5)})
      const host = new Map([...grads].map(([k, g]) => [k, g.dataSync() as Float32Array]))
      tf.dispose([...grads.values()])
      disposeBatch(b)
      model.dispose()
      return {loss: parts[0], grads: host}
    }
    const want = await step('cpu')
    ran.clear()
    const got = await step('cuda')
    expect([...ran].sort()).toEqual([
      'SpanAttention',
      'SpanAttentionGrad',
      'SpanCrossEntropy',
      'SpanCrossEntropyGrad',
      'SpanDropout',
      'SpanLayerNorm',
      'SpanLayerNormGrad',
      'SpanLinear',
      'SpanLinearGrad',
      'SpanResidualLayerNorm',
      'SpanResidualLayerNormGrad',
    ])
    expect(Math.abs(got.loss - want.loss) / Math.abs(want.loss)).toBeLessThan(1e-4)
    for (const [name, w] of want.grads) {
      const g = got.grads.get(name)!
      const scale = w.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-6)
      expect(
        g.reduce((m, x, i) => Math.max(m, Math.abs(x - w[i]) / scale), 0),
        name,
      ).toBeLessThan(1e-4)
    }
  })
})
