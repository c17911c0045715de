import * as tf from '@tensorflow/tfjs'
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {type CudaBackend, setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {f16ToF32, f32ToF16} from '../../../../src/core/engine/cuda/bf16.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// --precision fp16 (issue 35; src/core/engine/cuda/bf16.ts f32ToF16, native/cuda/kernels/cast_f16.cu,
// backend.ts gemm with CUDA_R_16F operands): the CPU reference bit for bit against an independent
// reference and against CUDA's own __float2half_rn (cuda_fp16.h's inline host code, where a toolkit
// is installed), the cast kernel on the stand-in device equal to it, products with fp16 operands equal
// to fp32 accumulation of the rounded operands.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const fromBits = (u: number) => new Float32Array(new Uint32Array([u]).buffer)[0]

/** Independent reference: the nearer of the two halves around x (65536 standing for inf above 65504), ties to the even one. */
function nearest(u: number): number {
  const x = fromBits(u)
  if (Number.isNaN(x)) return 0x7fff
  const sign = u >>> 31 ? 0x8000 : 0
  if (!Number.isFinite(x)) return sign | 0x7c00
  const a = Math.abs(x)
  const val = (h: number) => (h === 0x7c00 ? 65536 : f16ToF32(h))
  let lo = 0
  for (let step = 0x4000; step; step >>= 1) if (lo + step <= 0x7bff && val(lo + step) <= a) lo += step
  const [dLo, dHi] = [a - val(lo), val(lo + 1) - a]
  return sign | (dLo < dHi || (dLo === dHi && (lo & 1) === 0) ? lo : lo + 1)
}

/** Edges, and every float whose low 13 bits sit around a rounding point (2^19 upper parts × 6), plus an odd tail. */
function patterns(): Uint32Array {
  const edges = [
    0, 0x80000000, 1, 0x33000000, 0x33000001, 0xb3000000, 0x387fe000, 0x38800000, 0x477fe000, 0x477fefff, 0x477ff000, 0xc77ff000, 0x7f800000, 0xff800000,
    0x7fc00000, 0xffc00001,
  ]
  const lows = [0, 1, 0xfff, 0x1000, 0x1001, 0x1fff]
  const out = new Uint32Array(edges.length + 0x80000 * lows.length + 1)
  out.set(edges)
  let i = edges.length
  for (let hi = 0; hi < 0x80000; hi++) for (const lo of lows) out[i++] = ((hi << 13) | lo) >>> 0
  out[i] = 0x3f801000
  return out
}

describe('fp16 conversion (cast_f16.cu CPU reference)', () => {
  const p = patterns()

  it('rounds to nearest even, subnormals kept, ≥ 65520 to inf, canonical NaN: equal to an independent reference on a sample', () => {
    let bad = 0
    for (let i = 0; i < p.length; i += 7) if (f32ToF16(fromBits(p[i])) !== nearest(p[i])) bad++
    expect(bad).toBe(0)
    expect([1, 65504, 65519, 65520, -65520, 2 ** -24, 2 ** -25, 1.5 * 2 ** -25, 1 + 2 ** -11].map(f32ToF16)).toEqual([
      0x3c00, 0x7bff, 0x7bff, 0x7c00, 0xfc00, 0x0001, 0x0000, 0x0001, 0x3c00,
    ])
    for (let h = 0; h < 0x10000; h++) if (!Number.isNaN(f16ToF32(h)) && f32ToF16(f16ToF32(h)) !== h) bad++
    expect(bad).toBe(0)
  })

  const real = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include')
  it.skipIf(!existsSync(join(real, 'cuda_fp16.h')))("equals CUDA's own __float2half_rn (cuda_fp16.h) on every pattern", () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-fp16-ref-'))
    const src = join(dir, 'ref.cc')
    writeFileSync(
      src,
      '#include <cuda_fp16.h>\n#include <cstdio>\n#include <cstring>\n#include <cstdint>\nint main(){uint32_t u;while(fread(&u,4,1,stdin)==1){float f;memcpy(&f,&u,4);__half h=__float2half_rn(f);fwrite(&h,2,1,stdout);}}\n',
    )
    const c = spawnSync(process.env.CXX || 'g++', ['-std=c++17', '-O2', `-I${real}`, src, '-o', join(dir, 'ref')], {encoding: 'utf8'})
    expect(c.status, c.stderr).toBe(0)
    const r = spawnSync(join(dir, 'ref'), [], {input: Buffer.from(p.buffer), maxBuffer: 64 << 20})
    const want = new Uint16Array(r.stdout.buffer, r.stdout.byteOffset, p.length)
    let bad = 0
    p.forEach((u, i) => void (f32ToF16(fromBits(u)) !== want[i] && bad++))
    expect(bad).toBe(0)
  })
})

describe.skipIf(skip)('fp16 on the stand-in device', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
  })
  afterAll(async () => {
    setCudaOptions({precision: 'fp32'})
    await initBackend('cpu')
  })

  it('span_f32_to_f16 equals its CPU reference bit for bit (grid-stride, odd count)', () => {
    const p = patterns()
    const b = tf.backend() as unknown as CudaBackend
    const x = tf.tensor1d(new Float32Array(p.buffer), 'float32')
    const y = b.makeOutput([Math.ceil(p.length / 2)], 'int32')
    b.launch('cast_f16', 'span_f32_to_f16', [7, 1, 1], [64, 1, 1], [{ptr: x}, {ptr: y}, {i64: p.length}])
    const got = new Uint16Array((b.readSync(y.dataId) as Int32Array).buffer)
    b.free(y)
    x.dispose()
    let bad = 0
    p.forEach((u, i) => void (got[i] !== f32ToF16(fromBits(u)) && bad++))
    expect(bad).toBe(0)
  })

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
      Float32Array.from(t.dataSync(), (v) => f16ToF32(f32ToF16(v))),
      t.shape,
    )

  /** f on cuda at fp16 against f on the cpu backend over fp16-rounded inputs: fp32 accumulation, so within fp32 rounding. */
  async function asRoundedCpu(f: (...xs: tf.Tensor[]) => tf.Tensor, inputs: tf.Tensor[]): Promise<number> {
    await tf.setBackend('cuda')
    setCudaOptions({precision: 'fp16'})
    const got = tf.tidy(() => f(...inputs).dataSync() as Float32Array)
    setCudaOptions({precision: 'fp32'})
    const fp32 = tf.tidy(() => f(...inputs).dataSync() as Float32Array)
    const host = inputs.map((t) => t.dataSync().slice())
    await tf.setBackend('cpu')
    const want = tf.tidy(() => f(...inputs.map((t, i) => round(tf.tensor(host[i], t.shape)))).dataSync() as Float32Array)
    await tf.setBackend('cuda')
    expect(got).not.toEqual(fp32)
    return got.reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]) / Math.max(Math.abs(want[i]), 1)), 0)
  }

  it('MatMul with transposes, BatchMatMul with broadcast batches: fp32 accumulation of fp16-rounded operands (CUDA_R_16F)', async () => {
    const [a, b, c, d] = [F([5, 33], 1), F([17, 33], 2), F([3, 7, 9], 3), F([1, 9, 11], 4)]
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y, false, true), [a, b])).toBeLessThan(1e-5)
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y, true, false), [b, F([17, 6], 5)])).toBeLessThan(1e-5)
    expect(await asRoundedCpu((x, y) => tf.matMul(x, y), [c, d])).toBeLessThan(1e-5)
    tf.dispose([a, b, c, d])
  })

  it('an operand past 65504 becomes inf in the product (what loss scaling guards against)', async () => {
    await tf.setBackend('cuda')
    setCudaOptions({precision: 'fp16'})
    const got = tf.tidy(() => tf.matMul(tf.tensor2d([[70000, 1]]), tf.tensor2d([[1], [1]])).dataSync()[0])
    setCudaOptions({precision: 'fp32'})
    expect(got).toBe(Infinity)
  })
})
