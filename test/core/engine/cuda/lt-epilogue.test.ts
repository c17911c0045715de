import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {runFused} from '../../../../src/core/engine/fused-kernels.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// The Linear forward's bias through cuBLASLt's BIAS epilogue (kernels-fused.ts `linear`, gemm.cc
// `epilogue`) on the stand-in device: against the same GEMM with the bias added by its own kernel
// (SPAN_CUDA_LT_BIAS=0) and against the native backend, at fp32 (1e-5 relative) and with bf16
// inputs (the epilogue's bias and D stay fp32: the two cuda paths agree to fp32 rounding).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function rand(n: number, seed: number): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return -2 + ((s >>> 8) / 2 ** 24) * 4
  })
}
const F = (shape: number[], seed: number) => tf.tensor(rand(shape[0] * (shape[1] ?? 1), seed), shape)

/** SpanLinear's z on `backend`, with the epilogue on (lt) or off. */
async function linear(backend: string, lt: boolean, shape = {N: 9, K: 13, M: 11}): Promise<number[]> {
  await tf.setBackend(backend)
  const before = process.env.SPAN_CUDA_LT_BIAS
  process.env.SPAN_CUDA_LT_BIAS = lt ? '1' : '0'
  try {
    return tf.tidy(() => {
      const inputs = {x: F([shape.N, shape.K], 17), w: F([shape.M, shape.K], 18), b: F([shape.M], 19)}
      return Array.from((runFused('SpanLinear', inputs, {activation: 'none'}) as tf.Tensor[])[0].dataSync())
    })
  } finally {
    if (before === undefined) delete process.env.SPAN_CUDA_LT_BIAS
    else process.env.SPAN_CUDA_LT_BIAS = before
  }
}
const within = (got: number[], want: number[], rel: number) =>
  got.forEach((x, i) => expect(Math.abs(x - want[i]) / Math.max(Math.abs(want[i]), 1), `element ${i}: ${x} vs ${want[i]}`).toBeLessThanOrEqual(rel))

/** cuBLASLt's GELU (the tanh form) and its derivative, on the CPU. */
const tanhGelu = (z: tf.Tensor) => tf.tidy(() => z.mul(0.5).mul(tf.tanh(z.add(z.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI))).add(1)))
function tanhGeluGrad(z: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const t = tf.tanh(z.add(z.pow(3).mul(0.044715)).mul(Math.sqrt(2 / Math.PI)))
    const inner = z
      .square()
      .mul(3 * 0.044715)
      .add(1)
      .mul(Math.sqrt(2 / Math.PI))
    return t
      .add(1)
      .mul(0.5)
      .add(z.mul(0.5).mul(tf.scalar(1).sub(t.square())).mul(inner))
  })
}

/** SpanLinear and SpanLinearGrad with GeLU on `backend`: [y, z, dx, dw, db] as arrays. */
async function geluLinear(backend: string, N: number, K: number, M: number): Promise<number[][]> {
  await tf.setBackend(backend)
  return tf.tidy(() => {
    const [x, w, b, dy] = [F([N, K], 17), F([M, K], 18), F([M], 19), F([N, M], 20)]
    const [y, z] = runFused('SpanLinear', {x, w, b}, {activation: 'gelu'}) as tf.Tensor[]
    const grads = runFused('SpanLinearGrad', {dy, x, w, z}, {activation: 'gelu'}) as tf.Tensor[]
    return [y, z, ...grads].map((t) => Array.from(t.dataSync()))
  })
}

/** The tanh GeLU Linear and its gradients by their definitions on the CPU, from z as given. */
async function tanhReference(N: number, K: number, M: number, z: number[]): Promise<number[][]> {
  await tf.setBackend('cpu')
  return tf.tidy(() => {
    const [x, w, dy] = [F([N, K], 17), F([M, K], 18), F([N, M], 20)]
    const zt = tf.tensor2d(z, [N, M])
    const dz = dy.mul(tanhGeluGrad(zt))
    return [tanhGelu(zt), dz.matMul(w), dz.transpose().matMul(x), dz.sum(0)].map((t) => Array.from(t.dataSync()))
  })
}

describe.skipIf(skip)('the opt-in GELU_AUX_BIAS epilogue (SPAN_CUDA_GELU_EPILOGUE=tanh) on the cuda stand-in', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native')
    await initBackend('cuda', {precision: 'fp32'})
  })
  afterAll(async () => {
    delete process.env.SPAN_CUDA_GELU_EPILOGUE
    await initBackend('cpu')
  })

  it('off by default: the erf GeLU, equal to native', async () => {
    const [native, cuda] = [await geluLinear('cpu', 9, 13, 16), await geluLinear('cuda', 9, 13, 16)]
    cuda.forEach((out, j) => within(out, native[j], 1e-5))
  })

  it("on: y is the tanh form of the kept z (z as native), and the gradients are the tanh form's", async () => {
    const native = await geluLinear('cpu', 37, 13, 16)
    process.env.SPAN_CUDA_GELU_EPILOGUE = 'tanh'
    try {
      const [y, z, dx, dw, db] = await geluLinear('cuda', 37, 13, 16)
      within(z, native[1], 1e-5)
      const [yRef, dxRef, dwRef, dbRef] = await tanhReference(37, 13, 16, z)
      within(y, yRef, 1e-5)
      ;[dx, dw, db].forEach((g, j) => within(g, [dxRef, dwRef, dbRef][j], 1e-4))
      const off = Math.max(...y.map((v, i) => Math.abs(v - native[0][i])))
      expect(off).toBeGreaterThan(0) // not BERT's erf GeLU…
      expect(off).toBeLessThanOrEqual(4.8e-4) // …but within the tanh form's distance from it
      const odd = await geluLinear('cuda', 9, 13, 11) // aux ld 11: not a multiple of 8, the erf kernels
      within(odd[0], (await geluLinear('cpu', 9, 13, 11))[0], 1e-5)
    } finally {
      delete process.env.SPAN_CUDA_GELU_EPILOGUE
    }
  })
})

describe.skipIf(skip)('the BIAS epilogue of the Linear forward on the cuda stand-in', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native')
    await initBackend('cuda', {precision: 'fp32'})
  })
  afterAll(async () => {
    setCudaOptions({precision: 'fp32'})
    await initBackend('cpu')
  })

  it('fp32: equals the separate bias add and native within 1e-5, odd sizes and one past a tile', async () => {
    for (const shape of [
      {N: 9, K: 13, M: 11},
      {N: 33, K: 7, M: 65},
    ]) {
      const native = await linear('cpu', false, shape)
      const lt = await linear('cuda', true, shape)
      within(lt, await linear('cuda', false, shape), 1e-6)
      within(lt, native, 1e-5)
    }
  })

  it('bf16 inputs: the epilogue adds the fp32 bias as the separate kernel does', async () => {
    setCudaOptions({precision: 'bf16'})
    try {
      const lt = await linear('cuda', true)
      within(lt, await linear('cuda', false), 1e-6)
      const native = await linear('cpu', false)
      expect(Math.max(...lt.map((x, i) => Math.abs(x - native[i])))).toBeGreaterThan(0) // the products were rounded
    } finally {
      setCudaOptions({precision: 'fp32'})
    }
  })
})
