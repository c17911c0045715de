/**
 * The cuda backend's precisions (`--precision`): bf16's and fp16's CPU references of
 * native/cuda/kernels/cast_bf16.cu and cast_f16.cu, and the default precision by compute capability. bf16 keeps fp32's 8 exponent bits and 7 of its
 * 23 mantissa bits: the upper half of an fp32's bits.
 */

/** What `--precision` accepts (the cuda backend's matrix products). */
export const PRECISIONS = ['fp32', 'tf32', 'bf16', 'fp16'] as const
export type Precision = (typeof PRECISIONS)[number]

/**
 * bf16 products where the device has bf16 tensor cores (compute capability 8.0, Ampere, and later); fp16 with
 * dynamic loss scaling where it has fp16 ones only (7.x: V100, T4; issue 35); fp32 before (no tensor cores).
 */
export const defaultPrecision = (arch: number): Precision => (arch >= 80 ? 'bf16' : arch >= 70 ? 'fp16' : 'fp32')

/** Why the default is what it is, for `span doctor`. */
export function defaultPrecisionWhy(arch: number): string {
  const cc = `compute capability ${Math.floor(arch / 10)}.${arch % 10}`
  if (arch >= 80) return `bf16 (${cc}: bf16 tensor cores)`
  if (arch >= 70) return `fp16 with dynamic loss scaling (${cc}: fp16 tensor cores, no bf16)`
  return `fp32 (${cc}: no tensor cores)`
}

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

/**
 * CUDA's __float2half_rn (cvt.rn.f16.f32) as bits: the CPU reference of native/cuda/kernels/cast_f16.cu.
 * Round to nearest, ties to even; subnormal halves kept; from 65520 (half an ulp past 65504) to ±inf;
 * ±inf kept; every NaN to the canonical 0x7fff.
 */
export function f32ToF16(x: number): number {
  f32[0] = x
  const u = u32[0]
  const mag = (u & 0x7fffffff) >>> 0
  const sign = (u >>> 16) & 0x8000
  if (mag >= 0x7f800000) return mag === 0x7f800000 ? sign | 0x7c00 : 0x7fff
  if (mag > 0x477fefff) return sign | 0x7c00
  if (mag < 0x33000001) return sign
  const e = (mag >>> 23) - 127
  const shift = e >= -14 ? 13 : 13 + (-14 - e)
  const m = (mag & 0x7fffff) | 0x800000
  const kept = m >>> shift
  const dropped = m & ((1 << shift) - 1)
  const half = 1 << (shift - 1)
  const bits = (e >= -14 ? ((e + 15) << 10) + (kept & 0x3ff) : kept) + (dropped > half || (dropped === half && (kept & 1) === 1) ? 1 : 0)
  return sign | bits
}

/** fp16 bits → the float they stand for (exact; NaN for every NaN). */
export function f16ToF32(h: number): number {
  const s = h & 0x8000 ? -1 : 1
  const e = (h >>> 10) & 0x1f
  const m = h & 0x3ff
  if (e === 0x1f) return m ? NaN : s * Infinity
  return s * (e ? (1024 + m) * 2 ** (e - 25) : m * 2 ** -24)
}
