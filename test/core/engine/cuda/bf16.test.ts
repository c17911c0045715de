import * as tf from '@tensorflow/tfjs'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {type CudaBackend, setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {bf16ToF32, defaultPrecision, f32ToBf16} from '../../../../src/core/engine/cuda/bf16.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// --precision bf16 (src/core/engine/cuda/bf16.ts, native/cuda/kernels/cast_bf16.cu, backend.ts
// gemm): the conversion bit for bit against an independent reference and CUDA's own
// __float2bfloat16 (cuda_bf16.h's host code, where a toolkit is installed); the cast kernel on the
// stand-in device equal to its CPU reference; products with bf16 operands equal to fp32
// accumulation of the rounded operands, through offsets, leading dimensions and batches.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

const fromBits = (u: number) => new Float32Array(new Uint32Array([u]).buffer)[0]

/** Independent reference: the nearer of the two bf16 around x (inf counting as 2^128), ties to the even one. */
function nearest(u: number): number {
  if ((u & 0x7fffffff) >>> 0 > 0x7f800000) return 0x7fff
  const lo = u >>> 16 // toward zero
  if ((u & 0xffff) === 0) return lo
  const mag = (h: number) => ((h & 0x7fff) === 0x7f80 ? 2 ** 128 : Math.abs(bf16ToF32(h)))
  const x = Math.abs(fromBits(u))
  const [dLo, dHi] = [x - mag(lo), mag(lo + 1) - x]
  return dLo < dHi || (dLo === dHi && (lo & 1) === 0) ? lo : lo + 1
}

/** Edge values (ties both ways, subnormals, the largest finite, past it, inf, NaNs of both signs and payloads) and every upper half with lower halves at the rounding points. */
function patterns(): Uint32Array {
  const edges = [
    0, 0x80000000, 1, 0x80000001, 0x00008000, 0x00018000, 0x00007fff, 0x007fffff, 0x807fffff, 0x00800000, 0x3f800000, 0x3f808000, 0x3f818000, 0x3f807fff,
    0x3f808001, 0x7f7f0000, 0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fffffff,
    0x7f808000, 0xffffffff,
  ]
  const lows = [0, 1, 0x7fff, 0x8000, 0x8001, 0xffff]
  const out = new Uint32Array(edges.length + 0x10000 * lows.length + 1) // + 1: an odd count, the kernel's tail
  out.set(edges)
  let i = edges.length
  for (let hi = 0; hi < 0x10000; hi++) for (const lo of lows) out[i++] = ((hi << 16) | lo) >>> 0
  out[i] = 0x3f808000
  return out
}

describe('bf16 conversion (cast_bf16.cu CPU reference)', () => {
  const p = patterns()

  it('rounds to nearest even with canonical NaN, equal to an independent reference on every pattern', () => {
    let bad = 0
    for (const u of p) if (f32ToBf16(fromBits(u)) !== nearest(u)) bad++
    expect(bad).toBe(0)
    expect([0x3f808000, 0x3f818000, 0x7f7f8000, 0x7f7fffff, 0x00008000, 0x00018000, 0xffc00000].map((u) => f32ToBf16(fromBits(u)))).toEqual([
      0x3f80, 0x3f82, 0x7f80, 0x7f80, 0x0000, 0x0002, 0x7fff,
    ])
    expect(bf16ToF32(0x7f7f)).toBe(3.3895313892515355e38) // the largest bf16
  })

  const real = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include')
  it.skipIf(!existsSync(join(real, 'cuda_bf16.h')))("equals CUDA's own __float2bfloat16 (cuda_bf16.h) on every pattern", () => {
    const exe = join(mkdtempSync(join(tmpdir(), 'span-bf16-ref-')), 'bf16-ref')
    const cxx = process.env.CXX || 'g++'
    const c = spawnSync(cxx, ['-std=c++17', '-O2', `-I${real}`, join(import.meta.dirname, '../../../native/cuda/standin/bf16-ref.cc'), '-o', exe], {
      encoding: 'utf8',
    })
    expect(c.status, c.stderr).toBe(0)
    const r = spawnSync(exe, [], {input: Buffer.from(p.buffer)})
    const want = new Uint16Array(r.stdout.buffer, r.stdout.byteOffset, p.length)
    let bad = 0
    p.forEach((u, i) => void (f32ToBf16(fromBits(u)) !== want[i] && bad++))
    expect(bad).toBe(0)
  })

  it('defaults: bf16 from compute capability 8.0, fp16 on 7.x (issue 35), fp32 before', () => {
    expect([61, 70, 75, 80, 86, 90].map(defaultPrecision)).toEqual(['fp32', 'fp16', 'fp16', 'bf16', 'bf16', 'bf16'])
  })
})

describe.skipIf(skip)('bf16 on the stand-in device', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
  })
  afterAll(async () => {
    setCudaOptions({precision: 'fp32'})
    await initBackend('cpu')
  })

  it('span_f32_to_bf16 equals its CPU reference bit for bit (grid-stride, odd count)', () => {
    const p = patterns()
    const b = tf.backend() as unknown as CudaBackend
    const x = tf.tensor1d(new Float32Array(p.buffer), 'float32')
    const y = b.makeOutput([Math.ceil(p.length / 2)], 'int32') // two bf16 per 4-byte element
    b.launch('cast_bf16', 'span_f32_to_bf16', [7, 1, 1], [64, 1, 1], [{ptr: x}, {ptr: y}, {i64: p.length}])
    const got = new Uint16Array((b.readSync(y.dataId) as Int32Array).buffer)
    b.free(y)
    x.dispose()
    let bad = 0
    p.forEach((u, i) => void (got[i] !== f32ToBf16(fromBits(u)) && bad++))
    expect(bad).toBe(0)
  })

  /** Values that bf16 rounds (fp32 with full mantissas), seeded. */
  const F = (shape: number[], seed: number) => {
    let s = seed
    const n = shape.reduce((a, c) => a * c, 1)
    return tf.tensor(
      Float32Array.from({length: n}, () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 4 - 2),
      shape,
    )
  }
  const round = (t: tf.Tensor) =>
    tf.tensor(
      Float32Array.from(t.dataSync(), (v) => bf16ToF32(f32ToBf16(v))),
      t.shape,
    )

  /** f on cuda at bf16 against f on the cpu backend over bf16-rounded inputs: fp32 accumulation, so within fp32 rounding. */
  async function asRoundedCpu(f: (...xs: tf.Tensor[]) => tf.Tensor, inputs: tf.Tensor[]): Promise<number> {
    await tf.setBackend('cuda')
    setCudaOptions({precision: 'bf16'})
    const got = tf.tidy(() => f(...inputs).dataSync() as Float32Array)
    setCudaOptions({precision: 'fp32'})
    const fp32 = tf.tidy(() => f(...inputs).dataSync() as Float32Array)
    const host = inputs.map((t) => t.dataSync().slice())
    await tf.setBackend('cpu')
    const want = tf.tidy(() => f(...inputs.map((t, i) => round(tf.tensor(host[i], t.shape)))).dataSync() as Float32Array)
    await tf.setBackend('cuda')
    expect(got).not.toEqual(fp32) // the operands were rounded
    return got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]) / Math.max(Math.abs(want[i]), 1)), 0)
  }

  it('MatMul with transposes, BatchMatMul with broadcast batches: fp32 accumulation of bf16-rounded operands', async () => {
    const [a, b, c, d] = [F([5, 33], 1), F([17, 33], 2), F([3, 7, 9], 3), F([1, 9, 11], 4)]
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y, false, true), [a, b])).toBeLessThan(1e-5)
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y, true, false), [b, F([17, 6], 5)])).toBeLessThan(1e-5)
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y), [c, d])).toBeLessThan(1e-5)
    tf.dispose([a, b, c, d])
  })

  it('leaves no scratch behind: live device bytes and tensors unchanged by bf16 products', async () => {
    await tf.setBackend('cuda')
    setCudaOptions({precision: 'bf16'})
    const [a, b] = [F([9, 31], 6), F([31, 5], 7)]
    const live = () => (tf.memory() as unknown as {liveBytes: number}).liveBytes
    tf.tidy(() => tf.matMul(a, b).dataSync())
    const [bytes, tensors] = [live(), tf.memory().numTensors]
    for (let i = 0; i < 3; i++) tf.tidy(() => tf.matMul(a, b).dataSync())
    expect([live(), tf.memory().numTensors]).toEqual([bytes, tensors])
    setCudaOptions({precision: 'fp32'})
    tf.dispose([a, b])
  })
})
