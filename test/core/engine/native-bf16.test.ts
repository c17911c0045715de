import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend, loadNative, nativePrecision} from '../../../src/core/engine/index.js'
import {backendPrecision} from '../../../src/core/engine/backend.js'
import {bf16ToF32, f32ToBf16} from '../../../src/core/engine/cuda/bf16.js'
import {attentionFused, linearFused} from '../../../src/core/engine/fused.js'
import {nativeAddon} from '../../../src/core/engine/native.js'
import {setNativeFlashAttention} from '../../../src/core/engine/native-flash.js'

// --precision bf16 on the native backend, in process (issue 32 item 1): the addon's round_bf16
// (native/src/gemm.cc) is cuda's rounding (cuda/bf16.ts f32ToBf16, the CPU reference of
// cast_bf16.cu) bit for bit; a product, a Linear layer (forward and gradients) and the attention
// at bf16 equal fp32 products of the bf16-rounded operands computed by tfjs' own cpu kernels
// (the reference the cuda bf16 tests use: test/core/engine/cuda/bf16.test.ts), and differ from fp32.
const native = loadNative()
const bits = (x: number) => new Uint32Array(new Float32Array([x]).buffer)[0]

/** Edge values and, for every upper half, lower halves at the rounding points (as bf16.test.ts draws them). */
function patterns(): Float32Array {
  const edges = [
    0, 0x80000000, 1, 0x80000001, 0x00008000, 0x00018000, 0x00007fff, 0x007fffff, 0x807fffff, 0x00800000, 0x3f800000, 0x3f808000, 0x3f818000, 0x3f807fff,
    0x3f808001, 0x7f7f0000, 0x7f7f7fff, 0x7f7f8000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7f800001, 0xff800001, 0x7fc00000, 0xffc00000, 0x7fffffff,
  ]
  const lows = [0, 1, 0x7fff, 0x8000, 0x8001, 0xffff]
  const u = new Uint32Array(edges.length + 0x10000 * lows.length)
  u.set(edges)
  let i = edges.length
  for (let hi = 0; hi < 0x10000; hi++) for (const lo of lows) u[i++] = ((hi << 16) | lo) >>> 0
  return new Float32Array(u.buffer)
}

/** Seeded values in [-2, 2) with full fp32 mantissas (bf16 rounds them). */
function F(shape: number[], seed: number): tf.Tensor {
  let s = seed
  const n = shape.reduce((a, c) => a * c, 1)
  return tf.tensor(
    Float32Array.from({length: n}, () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 4 - 2),
    shape,
  )
}
const R = (t: tf.Tensor) =>
  tf.tensor(
    Float32Array.from(t.dataSync(), (v) => bf16ToF32(f32ToBf16(v))),
    t.shape,
  )
const rel = (got: ArrayLike<number>, want: ArrayLike<number>) =>
  Array.from(got).reduce((m, v, i) => Math.max(m, Math.abs(v - want[i]) / Math.max(Math.abs(want[i]), 1)), 0)

/** f's outputs on native at `p`. */
async function on(p: 'fp32' | 'bf16', f: () => tf.Tensor[]): Promise<Float32Array[]> {
  await initBackend('native', {precision: p})
  return tf.tidy(f).map((t) => t.dataSync() as Float32Array)
}

/** The reference: g on tfjs' plain cpu kernels (fp32), where g rounds the operands of its products itself. */
async function reference(g: () => tf.Tensor[]): Promise<Float32Array[]> {
  await initBackend('cpu')
  return tf.tidy(g).map((t) => t.dataSync() as Float32Array)
}

describe.skipIf(!native.available)('native --precision bf16 (in process)', () => {
  beforeAll(() => void tf.setBackend('cpu'))
  afterAll(async () => void (await initBackend('native', {precision: 'fp32'})))

  it('switches the addon and is what a resolved config records', async () => {
    await initBackend('native', {precision: 'bf16'})
    expect([nativePrecision(), backendPrecision()]).toEqual(['bf16', 'bf16'])
    await initBackend('cpu')
    expect(backendPrecision()).toBe('fp32') // tfjs' own kernels: no rounding
    await initBackend('native', {precision: 'fp32'})
    expect([nativePrecision(), backendPrecision()]).toEqual(['fp32', 'fp32'])
  })

  it("round_bf16 is cuda's f32ToBf16 bit for bit on every pattern (x·1 at bf16 is x rounded: the product of bf16 values is exact)", async () => {
    const p = patterns()
    const [y] = await on('bf16', () => [tf.matMul(tf.tensor2d(p, [p.length, 1]), tf.tensor2d([1], [1, 1]))])
    // bf16 dot-product instructions (vdpbf16ps, AMX) treat subnormal operands and results as zero
    // (DAZ/FTZ always, whatever MXCSR says): on oneDNN's bf16 kernels and span's avx512 one a subnormal rounds, then flushes
    const info = nativeAddon()?.info()
    const flushes = (info?.gemmPath === 'onednn' || info?.gemmPath === 'avx512') && /bf16|amx/.test(info.gemmIsa ?? '')
    let [bad, flushed] = [0, 0]
    p.forEach((x, i) => {
      const want = f32ToBf16(x) << 16
      const subnormal = (want & 0x7f800000) === 0 && (want & 0x7fffff) !== 0
      if (flushes && subnormal) return void (y[i] === 0 ? flushed++ : bad++)
      // a sum that starts from +0 turns −0 into +0 (x·1 + 0): zeros compare by value, NaN must be the canonical one
      if (Number.isNaN(x) ? bits(y[i]) !== 0x7fff0000 : (want & 0x7fffffff) === 0 ? y[i] !== 0 : bits(y[i]) !== want >>> 0) bad++
    })
    expect(bad).toBe(0)
    if (flushes) expect(flushed).toBeGreaterThan(0) // the patterns hold subnormals: they were checked, not skipped
    const [same] = await on('fp32', () => [tf.matMul(tf.tensor2d(p, [p.length, 1]), tf.tensor2d([1], [1, 1]))])
    expect(same.some((v, i) => bits(v) !== bits(y[i]))).toBe(true) // fp32 does not round
  })

  it('MatMul with transposes and broadcast batches: fp32 accumulation of bf16-rounded operands', async () => {
    const cases: [number[], number[], boolean, boolean][] = [
      [[5, 33], [17, 33], false, true],
      [[33, 5], [33, 6], true, false],
      [[3, 7, 9], [1, 9, 11], false, false],
    ]
    for (const [sa, sb, ta, tb] of cases) {
      const [a, b] = [F(sa, 1), F(sb, 2)]
      const [got] = await on('bf16', () => [tf.matMul(a, b, ta, tb)])
      const [fp32] = await on('fp32', () => [tf.matMul(a, b, ta, tb)])
      const [want] = await reference(() => [tf.matMul(R(a), R(b), ta, tb)])
      expect(rel(got, want)).toBeLessThan(1e-5)
      expect(rel(fp32, want)).toBeGreaterThan(1e-4) // the rounding shows
    }
  })

  it.each(['linear', 'gelu'] as const)('a %s Linear layer, forward and its three gradients', async (act) => {
    const [x, w, b, dy] = [F([12, 24], 3), F([20, 24], 4), F([20], 5), F([12, 20], 6)]
    const layer = () => {
      const g = tf.grads((x_: tf.Tensor, w_: tf.Tensor, b_: tf.Tensor) => linearFused(x_ as tf.Tensor2D, w_ as tf.Tensor2D, b_ as tf.Tensor1D, act))
      return [linearFused(x as tf.Tensor2D, w as tf.Tensor2D, b as tf.Tensor1D, act), ...g([x, w, b], dy)]
    }
    const got = await on('bf16', layer)
    const fp32 = await on('fp32', layer)
    // dz = dy · act′(z) in fp32 (z from the rounded product), then rounded as the backward products' operand
    const want = await reference(() => {
      const z = tf.add(tf.matMul(R(x), R(w), false, true), b)
      const gelu = (t: tf.Tensor) => tf.mul(tf.mul(t, 0.5), tf.add(1, tf.erf(tf.div(t, Math.SQRT2))))
      const dz = act === 'linear' ? dy : tf.grad(gelu)(z, dy)
      return [act === 'linear' ? z : gelu(z), tf.matMul(R(dz), R(w)), tf.matMul(R(dz), R(x), true, false), tf.sum(dz, 0)]
    })
    got.forEach((g, i) => expect(rel(g, want[i]), ['y', 'dx', 'dw', 'db'][i]).toBeLessThan(1e-5))
    expect(rel(fp32[0], want[0])).toBeGreaterThan(1e-4)
  })

  // Two kernels, two places the probabilities are rounded, each as its cuda counterpart: the kernel
  // that saves probs rounds P = softmax(S) (the simple path's bf16 GEMMs); flash.cc rounds the block's
  // unnormalised P̃ = exp(S − m) and divides by l = Σ P̃ (fp32) at the end, as flash_attention_wmma.cu
  // does. T = 6 is one block of keys, so m is the row's max.
  it.each([
    ['probs kernel', false],
    ['flash kernel', true],
  ] as const)("the attention's products round q, k, P and v; softmax stays fp32 (%s)", async (_, flash) => {
    const [B, T, H, A] = [2, 6, 8, 2]
    const [q, k, v] = [F([B, T, H], 7), F([B, T, H], 8), F([B, T, H], 9)]
    const mask = tf.tensor2d([0, 0, 0, 0, -10000, -10000, 0, 0, 0, 0, 0, 0], [B, T])
    const was = setNativeFlashAttention(flash)
    const got = await on('bf16', () => [attentionFused(q as tf.Tensor3D, k as tf.Tensor3D, v as tf.Tensor3D, mask, A, 0, 1)])
    setNativeFlashAttention(was)
    const heads = (t: tf.Tensor) => tf.transpose(tf.reshape(t, [B, T, A, H / A]), [0, 2, 1, 3]) // [B, A, T, d]
    const [want] = await reference(() => {
      const s = tf.add(tf.mul(tf.matMul(heads(R(q)), heads(R(k)), false, true), 1 / Math.sqrt(H / A)), tf.reshape(mask, [B, 1, 1, T])) // [B, A, T, T]
      const e = tf.exp(tf.sub(s, tf.max(s, -1, true))) // P̃ [B, A, T, T]
      const l = tf.sum(e, -1, true) // [B, A, T, 1]
      const ctx = flash ? tf.div(tf.matMul(R(e), heads(R(v))), l) : tf.matMul(R(tf.div(e, l)), heads(R(v))) // [B, A, T, d]
      return [tf.reshape(tf.transpose(ctx, [0, 2, 1, 3]), [B, T, H])]
    })
    expect(rel(got[0], want)).toBeLessThan(1e-5)
  })
})
