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
