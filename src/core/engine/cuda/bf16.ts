/**
 * bf16 on the cuda backend (`--precision bf16`): the CPU reference of native/cuda/kernels/cast_bf16.cu
 * and the default precision by compute capability. bf16 keeps fp32's 8 exponent bits and 7 of its
 * 23 mantissa bits: the upper half of an fp32's bits.
 */

/** What `--precision` accepts (the cuda backend's matrix products). */
export const PRECISIONS = ['fp32', 'tf32', 'bf16'] as const
export type Precision = (typeof PRECISIONS)[number]

/** bf16 products where the device has bf16 tensor cores (compute capability 8.0, Ampere, and later); fp32 before. */
export const defaultPrecision = (arch: number): Precision => (arch >= 80 ? 'bf16' : 'fp32')

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)

/**
 * CUDA's __float2bfloat16 (cvt.rn.bf16.f32) as bits: round to nearest, ties to even; every NaN
 * to the canonical 0x7fff; beyond the largest bf16 to ±inf; subnormals kept.
 */
export function f32ToBf16(x: number): number {
  f32[0] = x
  const u = u32[0]
  if ((u & 0x7fffffff) >>> 0 > 0x7f800000) return 0x7fff
  return Math.floor((u + 0x7fff + ((u >>> 16) & 1)) / 0x10000) // u + 0x8000 < 2^33: exact in a double
}

/** bf16 bits → the float they stand for (exact). */
export function bf16ToF32(h: number): number {
  u32[0] = (h & 0xffff) << 16
  return f32[0]
}
