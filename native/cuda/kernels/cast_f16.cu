// fp32 → fp16 copies of the operands of a matrix product under --precision fp16 (backend.ts gemm,
// issue 35): cuBLASLt then reads them as CUDA_R_16F with fp32 accumulation and an fp32 result.
// The rounding is CUDA's __float2half_rn (cvt.rn.f16.f32; cuda_fp16.hpp's host code): round to
// nearest, ties to even; subnormal halves kept (no flush to zero); past 65504 by half an ulp or
// more (≥ 65520) to ±inf; ±inf stays; every NaN becomes the canonical 0x7fff (sign dropped).
// Written with integer operations rather than cuda_fp16.h, which NVRTC does not find without a
// CUDA toolkit: the same text, so the same bits, on a GPU and on the emulator.
//
// CPU reference (src/core/engine/cuda/bf16.ts f32ToF16): m = |bits|, s = sign << 15;
//   NaN → 0x7fff; inf → s|0x7c00; m > 0x477fefff → s|0x7c00; m ≤ 0x33000000 (|x| ≤ 2^-25) → s;
//   else the mantissa (with its leading 1) shifted right by 13 (normal halves, exponent ≥ −14) or
//   13 + (−14 − exponent) (subnormal halves), the dropped bits rounding to nearest even.
// Two elements per thread, grid-stride.

__device__ __forceinline__ unsigned span_f2h_rn(float f) {
  const unsigned x = __float_as_uint(f), mag = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  if (mag >= 0x7f800000u) return mag == 0x7f800000u ? sign | 0x7c00u : 0x7fffu;  // inf, NaN
  if (mag > 0x477fefffu) return sign | 0x7c00u;                                    // ≥ 65520: inf
  if (mag < 0x33000001u) return sign;                                              // ≤ 2^-25: ±0
  const int e = (int)(mag >> 23) - 127, shift = e >= -14 ? 13 : 13 + (-14 - e);
  const unsigned m = (mag & 0x7fffffu) | 0x800000u, kept = m >> shift, dropped = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  const unsigned bits = (e >= -14 ? ((unsigned)(e + 15) << 10) + (kept & 0x3ffu) : kept);
  return sign | (bits + (dropped > half || (dropped == half && (kept & 1u)) ? 1u : 0u));  // 0x7bff + 1 = inf
}

/** y[i] = fp16(x[i]) for i < n; y is 2-byte aligned, n any size. */
extern "C" __global__ void span_f32_to_f16(const float* __restrict__ x, unsigned short* __restrict__ y, long long n) {
  const long long pairs = (n + 1) / 2;
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += (long long)gridDim.x * blockDim.x) {
    const long long i = 2 * p;
    y[i] = (unsigned short)span_f2h_rn(x[i]);
    if (i + 1 < n) y[i + 1] = (unsigned short)span_f2h_rn(x[i + 1]);
  }
}
