import * as tf from '@tensorflow/tfjs'
import {type CudaBackend, cudaOptions, setCudaOptions} from './backend.js'
import {bf16ToF32, f32ToBf16} from './bf16.js'
import type {SelftestCase} from './selftest-case.js'
import {selftestRand} from './selftest-rand.js'

/**
 * `span doctor --selftest`'s bf16 row (issue 21 item 1): on cuda at `--precision bf16`, matrix
 * products through cast_bf16.cu and cuBLASLt with bf16 operands (A·Bᵀ, Aᵀ·B, a broadcast batch);
 * on the reference backend, the fp32 products of the operands rounded to bf16 on the host
 * (bf16.ts f32ToBf16, round to nearest even): bf16·bf16 is exact in fp32, so the two differ only
 * by the order of the fp32 sums, and an unrounded operand is off by about 2⁻⁹. Then the cast
 * kernel alone, as the floats its bf16 stand for, on values with ties, NaN, ±inf, a subnormal and
 * the largest float (which rounds to inf).
 */

/** Seeded values in [-2, 2) with full fp32 mantissas. */
const values = (shape: number[], seed: number): tf.Tensor =>
  tf.tensor(
    selftestRand(
      shape.reduce((a, b) => a * b, 1),
      seed,
    ),
    shape,
  )

const CAST = [1, 1.00390625, 1.01171875, -3.1415927, 0.1, 65504.5, 3.4028235e38, -Infinity, Infinity, NaN, 1e-40, -0, 7.006492e-45]

const onCuda = (): boolean => tf.getBackend() === 'cuda'

/** x rounded to bf16, as floats: the host's rounding off cuda, cast_bf16.cu's on it. */
function rounded(x: tf.Tensor): tf.Tensor {
  if (!onCuda())
    return tf.tensor(
      Float32Array.from(x.dataSync(), (v) => bf16ToF32(f32ToBf16(v))),
      x.shape,
    )
  const b = tf.backend() as unknown as CudaBackend
  const y = b.makeOutput([Math.ceil(x.size / 2)], 'int32') // two bf16 a 4-byte element
  b.launch('cast_bf16', 'span_f32_to_bf16', [3, 1, 1], [32, 1, 1], [{ptr: x}, {ptr: y}, {i64: x.size}])
  const bits = new Uint16Array((b.readSync(y.dataId) as Int32Array).buffer, 0, x.size)
  b.free(y)
  return tf.tensor(Float32Array.from(bits, bf16ToF32), x.shape)
}

/** The products at bf16 (on cuda the backend's precision for the call; elsewhere of rounded operands), then the cast. */
function bf16Products(): tf.Tensor[] {
  const [a, b, c, d, e] = [values([5, 33], 1), values([17, 33], 2), values([3, 7, 9], 3), values([1, 9, 11], 4), values([5, 6], 5)]
  const was = cudaOptions().precision
  if (onCuda()) setCudaOptions({precision: 'bf16'})
  try {
    const op = (x: tf.Tensor) => (onCuda() ? x : rounded(x))
    const [A, B, C, D, E] = [a, b, c, d, e].map(op)
    const prods = [
      tf.matMul(A as tf.Tensor2D, B as tf.Tensor2D, false, true),
      tf.matMul(A as tf.Tensor2D, E as tf.Tensor2D, true, false),
      tf.matMul(C as tf.Tensor3D, D as tf.Tensor3D),
    ]
    return [...prods, rounded(tf.tensor(CAST))]
  } finally {
    if (onCuda()) setCudaOptions({precision: was})
  }
}

/** The bf16 case for `span doctor --selftest`: its own row, since no registered kernel is it. */
export const bf16Cases = (): SelftestCase[] => [{label: 'bf16 matrix products and cast', row: 'bf16 GEMM + cast_bf16.cu (fp32 accumulation)', f: bf16Products}]
