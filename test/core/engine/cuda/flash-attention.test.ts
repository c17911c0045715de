import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type CudaKernel, cudaKernelOf, registerCudaKernel} from '../../../../src/core/engine/cuda/kernel-table.js'
import {setFlashAttention} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'
import {attentionFused} from '../../../../src/core/engine/fused.js'
import {runFused} from '../../../../src/core/engine/fused-kernels.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// The fused attention of the cuda backend (kernels-flash-attention.ts, flash_attention_*.cu) on
// the stand-in device, through tfjs and the registered gradient: ctx and dq, dk, dv against the
// native backend and against the simple cuda path it replaces (GEMMs + attention_softmax.cu +
// dropout.cu), within 1e-5 relative, with padding and dropout (the same masks), T past one key
// tile, A and d varied; its second output is the row lse [B, A, T], never [B, A, T, T].
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function rand(n: number, seed: number): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return -2 + ((s >>> 8) / 2 ** 24) * 4
  })
}

type Shape = {B: number; T: number; H: number; A: number; rate: number; pad: number[]}
type Out = {ctx: number[]; dq: number[]; dk: number[]; dv: number[]}

/** ctx and the gradients of Σ ctx·dy through attentionFused (the registered gradient) on one backend. */
async function attend(backend: string, c: Shape): Promise<Out> {
  await tf.setBackend(backend)
  const before = tf.memory().numTensors
  const out = tf.tidy(() => {
    const x = (seed: number) => tf.tensor3d(rand(c.B * c.T * c.H, seed), [c.B, c.T, c.H])
    const mask = tf.tensor2d(
      c.pad.flatMap((p) => Array.from({length: c.T}, (_, t) => (t >= c.T - p ? -10000 : 0))),
      [c.B, c.T],
    )
    const dy = x(4)
    const f = (q: tf.Tensor, k: tf.Tensor, v: tf.Tensor) =>
      attentionFused(q as tf.Tensor3D, k as tf.Tensor3D, v as tf.Tensor3D, mask, c.A, c.rate, 99)
        .mul(dy)
        .sum() as tf.Scalar
    const [dq, dk, dv] = tf.grads(f)([x(1), x(2), x(3)])
    const ctx = attentionFused(x(1) as tf.Tensor3D, x(2) as tf.Tensor3D, x(3) as tf.Tensor3D, mask, c.A, c.rate, 99)
    return [ctx, dq, dk, dv].map((t) => Array.from(t.dataSync()))
  })
  expect(tf.memory().numTensors, 'no tensor leaks').toBe(before)
  return {ctx: out[0], dq: out[1], dk: out[2], dv: out[3]}
}

function close(got: Out, want: Out, what: string): void {
  for (const key of ['ctx', 'dq', 'dk', 'dv'] as const) {
    const w = want[key]
    const err = got[key].reduce((m, x, i) => Math.max(m, Math.abs(x - w[i]) / Math.max(Math.abs(w[i]), 1)), 0)
    expect(err, `${what}: ${key}`).toBeLessThanOrEqual(1e-5)
  }
}

const CASES: Shape[] = [
  {B: 2, T: 7, H: 24, A: 3, rate: 0.2, pad: [2, 0]}, // d = 8, one partial tile
  {B: 2, T: 70, H: 32, A: 2, rate: 0.1, pad: [0, 17]}, // d = 16: two key tiles of 64, the last of 6
  {B: 1, T: 37, H: 128, A: 1, rate: 0, pad: [5]}, // d = 128 (the widest): tiles of 32, no dropout
]

describe.skipIf(skip)('fused (flash) attention on the cuda stand-in device', () => {
  const ran: string[] = []
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native')
    await initBackend('cuda')
    for (const name of ['SpanAttention', 'SpanAttentionGrad']) {
      const own = cudaKernelOf(name) as CudaKernel
      registerCudaKernel(name, (a) => {
        const r = own(a)
        if (r) ran.push(name)
        return r
      })
    }
  })
  afterAll(async () => {
    setFlashAttention(true)
    await initBackend('cpu')
  })

  it('saves the row lse [B, A, T] in place of probs [B, A, T, T]', async () => {
    await tf.setBackend('cuda')
    const shapes = tf.tidy(() => {
      const x = tf.tensor3d(rand(2 * 5 * 8, 1), [2, 5, 8])
      return (runFused('SpanAttention', {q: x, k: x, v: x, mask: tf.zeros([2, 5])}, {heads: 2, rate: 0, seed: 1}) as tf.Tensor[]).map((t) => t.shape)
    })
    expect(shapes).toEqual([
      [2, 5, 8],
      [2, 2, 5],
    ])
  })

  for (const c of CASES)
    it(`B ${c.B} T ${c.T} H ${c.H} A ${c.A} rate ${c.rate} padding ${c.pad}: equals native and the simple cuda path`, async () => {
      const native = await attend('cpu', c)
      ran.length = 0
      setFlashAttention(true)
      const flash = await attend('cuda', c)
      expect(ran.sort(), 'the cuda kernels ran, not the composite').toEqual(['SpanAttention', 'SpanAttention', 'SpanAttentionGrad'])
      setFlashAttention(false)
      const simple = await attend('cuda', c)
      setFlashAttention(true)
      close(flash, native, 'flash vs native')
      close(flash, simple, 'flash vs the simple cuda path')
    })
})
