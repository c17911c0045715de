import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {setFlashAttention, setTensorCoreAttention, tensorCoreAttentionFailure} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {type AttendOut, type AttendShape, attend} from './attention-grads.js'

// The tensor-core attention (flash_attention_wmma.cu: nvcuda::wmma on bf16 operands, fp32
// accumulation and softmax) that --precision bf16 selects (and its tf32 form, d ≤ 64, for tf32), on the stand-in device: ctx and dq, dk,
// dv against the CPU reference (native) over bf16-rounded inputs within bf16 rounding (P and dS are
// rounded to bf16 for their products, as the simple path's bf16 GEMMs round them), and against
// that simple path at bf16; with padding, dropout (native's mask: the gradients agree only if the
// backward pass redraws the forward's mask), odd T and T not a multiple of the 32-key tile; the
// same bits under every emulator schedule (no race); and a key tile whose mask is −∞ throughout
// (no NaN, fp32 FMA kernels and tensor cores alike).
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const SCHEDULES = ['inorder', 'reverse', 'random:3', 'warp']

type Shape = AttendShape
type Out = AttendOut

/** x rounded to bf16 (nearest even) on the host, as cast_bf16.cu rounds; or to tf32 (nearest, ties away), as __float_to_tf32 does. */
function rounded(xs: number[], precision: 'bf16' | 'tf32'): number[] {
  const f = new Float32Array(xs)
  const u = new Uint32Array(f.buffer)
  for (let i = 0; i < u.length; i++)
    u[i] = precision === 'bf16' ? (((u[i] + 0x7fff + ((u[i] >>> 16) & 1)) >>> 16) << 16) >>> 0 : ((u[i] + 0x1000) & ~0x1fff) >>> 0
  return Array.from(f)
}

/** ctx and the gradients of Σ ctx·dy through attentionFused on one backend; inputs rounded to bf16 (or tf32) when `round`. */
const attendRounded = (backend: string, c: Shape, round: boolean | 'tf32'): Promise<Out> =>
  attend(backend, c, round ? (xs) => rounded(xs, round === true ? 'bf16' : 'tf32') : undefined)

/** The largest |got − want| / max(|want|, 1) of each output. */
const errors = (got: Out, want: Out) =>
  Object.fromEntries(
    (['ctx', 'dq', 'dk', 'dv'] as const).map((k) => [
      k,
      got[k].reduce((m, x, i) => Math.max(m, Number.isFinite(x) ? Math.abs(x - want[k][i]) / Math.max(Math.abs(want[k][i]), 1) : Infinity), 0),
    ]),
  )

function close(got: Out, want: Out, tol: number, what: string): void {
  for (const [k, e] of Object.entries(errors(got, want))) expect(e, `${what}: ${k}`).toBeLessThanOrEqual(tol)
}

const pad = (p: number[], T: number) => (b: number, t: number) => (t >= T - p[b] ? -10000 : 0)
const CASES: Shape[] = [
  {B: 2, T: 45, H: 32, A: 2, rate: 0.1, mask: pad([0, 13], 45)}, // d 16: key tiles of 32 and 13, odd T, dropout
  {B: 1, T: 33, H: 64, A: 1, rate: 0.2, mask: pad([4], 33)}, // d 64: the second tile holds one key
  {B: 1, T: 7, H: 256, A: 2, rate: 0, mask: pad([2], 7)}, // d 128: one partial tile, no dropout
]
// within bf16 rounding: P and dS (and the inputs) rounded to 8 significant bits, fp32 sums
const BF16_TOL = 2e-2
// tf32 keeps 10 of the 23 mantissa bits: 8 times closer
const TF32_TOL = 2.5e-3

describe.skipIf(skip)('tensor-core (wmma) attention on the cuda stand-in device at --precision bf16', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native')
    await initBackend('cuda')
  })
  afterAll(async () => {
    setCudaOptions({precision: 'fp32'})
    setFlashAttention(true)
    setTensorCoreAttention(true)
    delete process.env.SPAN_EMU_SCHEDULE
    await initBackend('cpu')
  })

  for (const c of CASES)
    it(`B ${c.B} T ${c.T} H ${c.H} A ${c.A} rate ${c.rate}: the CPU reference within bf16 rounding, the simple bf16 path, the FMA kernels differ`, async () => {
      const native = await attendRounded('cpu', c, true)
      setCudaOptions({precision: 'bf16'})
      const wmma = await attendRounded('cuda', c, false)
      expect(tensorCoreAttentionFailure()).toBeNull()
      setTensorCoreAttention(false)
      const fma = await attendRounded('cuda', c, false)
      setTensorCoreAttention(true)
      setFlashAttention(false)
      const simple = await attendRounded('cuda', c, false)
      setFlashAttention(true)
      setCudaOptions({precision: 'fp32'})
      close(wmma, native, BF16_TOL, 'wmma vs native on bf16 inputs')
      close(wmma, simple, BF16_TOL, 'wmma vs the simple path at bf16')
      expect(wmma.ctx, 'the tensor-core kernels ran (P rounded to bf16), not the fp32 FMA ones').not.toEqual(fma.ctx)
    })

  it('tf32 (d 16 and 64): the CPU reference over tf32-rounded inputs within tf32 rounding, and not the FMA kernels', async () => {
    for (const c of CASES.slice(0, 2)) {
      const native = await attendRounded('cpu', c, 'tf32')
      setCudaOptions({precision: 'tf32'})
      const wmma = await attendRounded('cuda', c, false)
      setTensorCoreAttention(false)
      const fma = await attendRounded('cuda', c, false)
      setTensorCoreAttention(true)
      setCudaOptions({precision: 'fp32'})
      expect(tensorCoreAttentionFailure()).toBeNull()
      close(wmma, native, TF32_TOL, `tf32 T ${c.T} H ${c.H}: wmma vs native on tf32 inputs`)
      expect(wmma.ctx, 'the tensor-core kernels ran').not.toEqual(fma.ctx)
    }
  })

  it('the same bits under every emulator schedule (no race): the tensor-core kernels (bf16, tf32) and the fp32 FMA ones', async () => {
    const c = CASES[0]
    for (const precision of ['bf16', 'tf32', 'fp32'] as const) {
      setCudaOptions({precision})
      const runs: Out[] = []
      for (const sch of SCHEDULES) {
        process.env.SPAN_EMU_SCHEDULE = sch
        runs.push(await attendRounded('cuda', c, false))
      }
      delete process.env.SPAN_EMU_SCHEDULE
      for (const r of runs.slice(1)) expect(r, precision).toEqual(runs[0])
    }
    setCudaOptions({precision: 'fp32'})
  })

  it('a key tile masked −∞ throughout gives no NaN: fp32 FMA kernels equal native at 1e-5, tensor cores within bf16', async () => {
    const ninf = Number.NEGATIVE_INFINITY
    const c: Shape = {B: 2, T: 70, H: 32, A: 2, rate: 0.1, mask: (b, t) => (t < (b ? 64 : 32) ? ninf : 0)} // fp32 tiles of 64 keys, bf16 of 32
    const native = await attendRounded('cpu', c, false)
    for (const k of ['ctx', 'dq', 'dk', 'dv'] as const) expect(native[k].every(Number.isFinite), `native ${k}`).toBe(true)
    const fma = await attendRounded('cuda', c, false)
    close(fma, native, 1e-5, 'FMA kernels vs native')
    const nativeBf16 = await attendRounded('cpu', c, true)
    setCudaOptions({precision: 'bf16'})
    const wmma = await attendRounded('cuda', c, false)
    setCudaOptions({precision: 'fp32'})
    close(wmma, nativeBf16, BF16_TOL, 'wmma vs native')
  })
})
