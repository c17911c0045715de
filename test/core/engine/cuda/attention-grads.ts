import * as tf from '@tensorflow/tfjs'
import {expect} from 'vitest'
import {attentionFused} from '../../../../src/core/engine/fused.js'

// What flash-attention.test.ts and flash-attention-wmma.test.ts both run: ctx and the gradients
// of Σ ctx·dy through attentionFused (the registered gradient) on one backend, from fixed inputs.

/** n numbers in [−2, 2) from a small LCG (the same inputs on every backend). */
export function rand(n: number, seed: number): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return -2 + ((s >>> 8) / 2 ** 24) * 4
  })
}

/** An attention problem: q, k, v [B, T, H] in A heads, dropout rate, the additive mask's value at (b, t). */
export type AttendShape = {B: number; T: number; H: number; A: number; rate: number; mask: (b: number, t: number) => number}
export type AttendOut = Record<'ctx' | 'dq' | 'dk' | 'dv', number[]>

/** ctx and dq, dk, dv on `backend`; `values` maps the inputs (rounding them, say); no tensor leaks. */
export async function attend(backend: string, c: AttendShape, values = (xs: number[]) => xs): Promise<AttendOut> {
  await tf.setBackend(backend)
  const before = tf.memory().numTensors
  const out = tf.tidy(() => {
    const x = (seed: number) => tf.tensor3d(values(rand(c.B * c.T * c.H, seed)), [c.B, c.T, c.H]) // [B, T, H]
    const mask = tf.tensor2d(
      Array.from({length: c.B * c.T}, (_, i) => c.mask(Math.floor(i / c.T), i % c.T)),
      [c.B, c.T],
    ) // [B, T]
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
