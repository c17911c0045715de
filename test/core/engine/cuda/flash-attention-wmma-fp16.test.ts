import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {f16ToF32, f32ToF16} from '../../../../src/core/engine/cuda/bf16.js'
import {setFlashAttention, setTensorCoreAttention, tensorCoreAttentionFailure} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {type AttendOut, type AttendShape, attend} from './attention-grads.js'

// The fp16 tensor-core attention (issue 35: flash_attention_wmma.cu compiled with -DSPAN_FA_F16, wmma
// m16n16k16 on __half, fp32 accumulation and softmax) that --precision fp16 selects, on the stand-in
// device: ctx and dq, dk, dv against the CPU reference (native) over fp16-rounded inputs within fp16
// rounding (P and dS are rounded to fp16 for their products), against the simple path at fp16, not
// equal to the FMA kernels (the module ran); the same bits under every emulator schedule.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

const rounded = (xs: number[]): number[] => xs.map((x) => f16ToF32(f32ToF16(x)))

const errors = (got: AttendOut, want: AttendOut) =>
  (['ctx', 'dq', 'dk', 'dv'] as const).map((k) => [
    k,
    got[k].reduce((m, x, i) => Math.max(m, Number.isFinite(x) ? Math.abs(x - want[k][i]) / Math.max(Math.abs(want[k][i]), 1) : Infinity), 0),
  ]) as [string, number][]

function close(got: AttendOut, want: AttendOut, tol: number, what: string): void {
  for (const [k, e] of errors(got, want)) expect(e, `${what}: ${k}`).toBeLessThanOrEqual(tol)
}

const pad = (p: number[], T: number) => (b: number, t: number) => (t >= T - p[b] ? -10000 : 0)
const CASES: AttendShape[] = [
  {B: 2, T: 45, H: 32, A: 2, rate: 0.1, mask: pad([0, 13], 45)}, // d 16, odd T, dropout
  {B: 1, T: 33, H: 64, A: 1, rate: 0.2, mask: pad([4], 33)}, // d 64
]
// fp16 keeps 10 of the 23 mantissa bits (bf16: 7, tolerance 2e-2): 8 times closer
const FP16_TOL = 2.5e-3

describe.skipIf(skip)('tensor-core (wmma) attention on the cuda stand-in device at --precision fp16', () => {
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
    it(`B ${c.B} T ${c.T} H ${c.H} A ${c.A}: the CPU reference within fp16 rounding, the simple fp16 path, not the FMA kernels`, async () => {
      const native = await attend('cpu', c, rounded)
      setCudaOptions({precision: 'fp16'})
      const wmma = await attend('cuda', c)
      expect(tensorCoreAttentionFailure()).toBeNull()
      setTensorCoreAttention(false)
      const fma = await attend('cuda', c)
      setTensorCoreAttention(true)
      setFlashAttention(false)
      const simple = await attend('cuda', c)
      setFlashAttention(true)
      setCudaOptions({precision: 'fp32'})
      close(wmma, native, FP16_TOL, 'wmma vs native on fp16 inputs')
      close(wmma, simple, FP16_TOL, 'wmma vs the simple path at fp16')
      expect(wmma.ctx, 'the tensor-core kernels ran (P rounded to fp16), not the fp32 FMA ones').not.toEqual(fma.ctx)
    })

  it('the same bits under every emulator schedule (no race)', async () => {
    setCudaOptions({precision: 'fp16'})
    const runs: AttendOut[] = []
    for (const sch of ['inorder', 'reverse', 'random:3', 'warp']) {
      process.env.SPAN_EMU_SCHEDULE = sch
      runs.push(await attend('cuda', CASES[0]))
    }
    delete process.env.SPAN_EMU_SCHEDULE
    setCudaOptions({precision: 'fp32'})
    for (const r of runs.slice(1)) expect(r).toEqual(runs[0])
  })
})
