import * as tf from '@tensorflow/tfjs'
import {attentionFused} from '../fused.js'
import {cudaOptions, setCudaOptions} from './backend.js'
import {bf16ToF32, f32ToBf16} from './bf16.js'
import {tensorCoreAttentionFailure} from './kernels-flash-attention.js'
import {selftestRand} from './selftest-rand.js'

/**
 * `span doctor --selftest`'s tensor-core attention row (docs/cuda-fused-kernels.md, "Tensor-core
 * attention"): SpanAttention and its gradient at --precision bf16 with heads 16 and 64 wide
 * (flash_attention_wmma.cu), padding, dropout and T not a multiple of the 32-row tile, against the
 * reference backend on the same inputs rounded to bf16, within bf16 rounding. On a GPU this is the
 * check of the real mma.h fragments and tensor cores, which the CPU emulator only models. When the
 * kernels do not compile (no CUDA headers for NVRTC), the row says so and passes: bf16 attention then
 * runs on the FMA kernels, which the fp32 rows check.
 */
export const WMMA_TOLERANCE = 2e-2

type Shape = {B: number; T: number; H: number; A: number; pad: number[]}
const SHAPES: Shape[] = [
  {B: 2, T: 45, H: 32, A: 2, pad: [0, 13]},
  {B: 1, T: 33, H: 128, A: 2, pad: [4]},
]

/** Values in [−2, 2), seeded; rounded to bf16 when `round`. */
const values = (n: number, seed: number, round: boolean): number[] => selftestRand(n, seed).map((x) => (round ? bf16ToF32(f32ToBf16(x)) : x))

/** ctx, dq, dk, dv (host copies) on the current backend. */
function attend(c: Shape, round: boolean): number[][] {
  return tf.tidy(() => {
    const x = (seed: number) => tf.tensor3d(values(c.B * c.T * c.H, seed, round), [c.B, c.T, c.H])
    const mask = tf.tensor2d(
      c.pad.flatMap((p) => Array.from({length: c.T}, (_, t) => (t >= c.T - p ? -10000 : 0))),
      [c.B, c.T],
    )
    const [q, k, v, dy] = [1, 2, 3, 4].map(x)
    const f = (a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => attentionFused(a as tf.Tensor3D, b as tf.Tensor3D, d as tf.Tensor3D, mask, c.A, 0.1, 7)
    const grads = tf.grads((a: tf.Tensor, b: tf.Tensor, d: tf.Tensor) => f(a, b, d).mul(dy).sum() as tf.Scalar)([q, k, v])
    return [f(q, k, v), ...grads].map((t) => Array.from(t.dataSync()))
  })
}

const relErr = (got: number[][], want: number[][]) =>
  got.reduce((m, g, j) => g.reduce((mm, x, i) => Math.max(mm, Number.isNaN(x) ? Infinity : Math.abs(x - want[j][i]) / Math.max(Math.abs(want[j][i]), 1)), m), 0)

export async function wmmaSelftestRow(reference: string): Promise<{kernel: string; cases: number; maxRelError: number; ok: boolean}> {
  let err = 0
  for (const c of SHAPES) {
    await tf.setBackend(reference)
    const want = attend(c, true)
    await tf.setBackend('cuda')
    const was = cudaOptions().precision
    setCudaOptions({precision: 'bf16'})
    try {
      err = Math.max(err, relErr(attend(c, false), want))
    } finally {
      setCudaOptions({precision: was}) // the precision the selftest runs its other rows at
    }
  }
  const why = tensorCoreAttentionFailure()
  if (why) return {kernel: `tensor-core attention (bf16): not compiled, FMA kernels instead (${why})`, cases: 0, maxRelError: 0, ok: true}
  return {kernel: `tensor-core attention (bf16, d 16 and 64, fwd+bwd; ≤ ${WMMA_TOLERANCE})`, cases: SHAPES.length, maxRelError: err, ok: err <= WMMA_TOLERANCE}
}
