import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type CudaKernel, cudaKernelOf, registerCudaKernel} from '../../../../src/core/engine/cuda/kernel-table.js'
import {setFlashAttention} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'
import {runFused} from '../../../../src/core/engine/fused-kernels.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {type AttendOut, type AttendShape, attend, rand} from './attention-grads.js'

// The fused attention of the cuda backend (kernels-flash-attention.ts, flash_attention_*.cu) on
// the stand-in device, through tfjs and the registered gradient: ctx and dq, dk, dv against the
// native backend and against the simple cuda path it replaces (GEMMs + attention_softmax.cu +
// dropout.cu), within 1e-5 relative, with padding and dropout (the same masks), T past one key
// tile, A and d varied; its second output is the row lse [B, A, T], never [B, A, T, T].
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

type Shape = {B: number; T: number; H: number; A: number; rate: number; pad: number[]}

/** The shared harness's problem: the last `pad[b]` keys of row b masked with −10000, as span's models mask padding. */
const padded = (c: Shape): AttendShape => ({...c, mask: (b, t) => (t >= c.T - c.pad[b] ? -10000 : 0)})
const attendPadded = (backend: string, c: Shape): Promise<AttendOut> => attend(backend, padded(c))

function close(got: AttendOut, want: AttendOut, what: string): void {
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
      const native = await attendPadded('cpu', c)
      ran.length = 0
      setFlashAttention(true)
      const flash = await attendPadded('cuda', c)
      expect(ran.sort(), 'the cuda kernels ran, not the composite').toEqual(['SpanAttention', 'SpanAttention', 'SpanAttentionGrad'])
      setFlashAttention(false)
      const simple = await attendPadded('cuda', c)
      setFlashAttention(true)
      close(flash, native, 'flash vs native')
      close(flash, simple, 'flash vs the simple cuda path')
    })
})
