// fp32 → bf16 copies of the operands of a matrix product under --precision bf16 (backend.ts
// gemm): cuBLASLt then reads them as CUDA_R_16BF with fp32 accumulation and an fp32 result.
// The rounding is CUDA's __float2bfloat16 (cvt.rn.bf16.f32 on sm_80+, cuda_bf16.hpp's host code
// elsewhere): round to nearest, ties to even; every NaN becomes the canonical 0x7fff (sign
// dropped); values past the largest bf16 round to ±inf; subnormals are kept (no flush to zero).
// Written with integer operations rather than cuda_bf16.h, which NVRTC does not find without a
// CUDA toolkit: the same text, so the same bits, on a GPU and on the emulator.
//
// CPU reference (src/core/engine/cuda/bf16.ts f32ToBf16): u = the float's bits;
//   u & 0x7fffffff > 0x7f800000 ? 0x7fff : (u + 0x7fff + ((u >> 16) & 1)) >> 16
// Two elements per thread, grid-stride.

__device__ __forceinline__ unsigned span_f2bf_rn(float f) {
  const unsigned u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;        // +inf stays inf; FLT_MAX carries into inf
}

/** y[i] = bf16(x[i]) for i < n; y is 2-byte aligned, n any size. */
extern "C" __global__ void span_f32_to_bf16(const float* __restrict__ x, unsigned short* __restrict__ y, long long n) {
  const long long pairs = (n + 1) / 2;
  for (long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x; p < pairs; p += (long long)gridDim.x * blockDim.x) {
    const long long i = 2 * p;
    y[i] = (unsigned short)span_f2bf_rn(x[i]);
    if (i + 1 < n) y[i + 1] = (unsigned short)span_f2bf_rn(x[i + 1]);
  }
}
