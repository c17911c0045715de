// The cuBLASLt stand-in's model of one cublasLtMatmul call: the descriptors as set, their
// validation into a Problem (what the real library refuses, refused the same way), element
// conversions (bf16 bit-exact with CUDA's __float2bfloat16, TF32 rounding) and the epilogues.
#ifndef SPAN_LT_PROBLEM_H
#define SPAN_LT_PROBLEM_H

#include <cstdint>
#include <cstring>

namespace span_lt {

/** cublasLtMatmulDesc_t's attributes (cublasLt.h defaults). */
struct Desc {
  int32_t compute = 0;
  int32_t scale = 0;
  int32_t pointerMode = 0;  // CUBLASLT_POINTER_MODE_HOST
  int32_t transa = 0, transb = 0, transc = 0;
  uint32_t epilogue = 1;  // CUBLASLT_EPILOGUE_DEFAULT
  const void* bias = nullptr;
  int64_t biasBatchStride = 0;
  void* aux = nullptr;
  int64_t auxLd = 0, auxBatchStride = 0;
  int32_t auxType = -1, biasType = -1;  // -1: D's type
};

/** cublasLtMatrixLayout_t's attributes. */
struct Layout {
  uint32_t type = 0;
  int32_t order = 0;  // CUBLASLT_ORDER_COL
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t batch = 1;
  int64_t stride = 0;
};

/** One validated call: D [m, n] = epilogue(alpha · op(A) [m, k] · op(B) [k, n] + beta · C), `batch` times. */
struct Problem {
  Layout A, B, C, D;
  int compute = 0;
  bool transa = false, transb = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  uint32_t epilogue = 1;
  int biasType = 0, auxType = 0;
  int64_t biasBatchStride = 0, auxLd = 0, auxBatchStride = 0;
  float alpha = 1, beta = 0;
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void* d = nullptr;
  void* bias = nullptr;  // input (BIAS epilogues) or output (bias gradients)
  void* aux = nullptr;   // output (GELU_AUX*) or input (DGELU*)
};

/** Validates the descriptors into p (no pointers yet): SUCCESS, INVALID_VALUE or NOT_SUPPORTED. */
int describe(const Desc* d, const Layout* A, const Layout* B, const Layout* C, const Layout* D, Problem& p);

/** Binds the call's scalars and pointers to p, refusing what needs a pointer that is null. */
int bind(Problem& p, const void* alpha, const void* a, const void* b, const void* beta, const void* c, void* d);

/** The epilogue of batch `batch` on acc = op(A)·op(B) ([m, n], ld m); a and b are that batch's fp32 operands. */
void epilogue(const Problem& p, int64_t batch, const float* acc, const float* a, const float* b);

/** CUDA's __float2bfloat16 (round to nearest even; NaN → 0x7fff), bit for bit. */
inline uint16_t floatToBf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  const uint32_t rest = x << 16, r = x >> 16;
  return (uint16_t)((rest > 0x80000000u || (rest == 0x80000000u && (r & 1u))) ? r + 1 : r);
}

inline float bf16ToFloat(uint16_t h) {
  const uint32_t x = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/** CUDA's __float2half_rn (round to nearest even, subnormals kept, NaN → 0x7fff), bit for bit (emu/include/cuda_fp16.h, checked there against cuda_fp16.h). */
inline uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t mag = x & 0x7fffffffu, sign = (x >> 16) & 0x8000u;
  if (mag >= 0x7f800000u) return (uint16_t)(mag == 0x7f800000u ? sign | 0x7c00u : 0x7fffu);
  if (mag > 0x477fefffu) return (uint16_t)(sign | 0x7c00u);  // past 65504's halfway to 65536: inf
  if (mag < 0x33000001u) return (uint16_t)sign;                // at most 2^-25 (a tie to the even 0): ±0
  const int e = (int)(mag >> 23) - 127, shift = e >= -14 ? 13 : 13 + (-14 - e);
  const uint32_t m = (mag & 0x7fffffu) | 0x800000u, kept = m >> shift, dropped = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  const uint32_t bits = (e >= -14 ? ((uint32_t)(e + 15) << 10) + (kept & 0x3ffu) : kept) + (dropped > half || (dropped == half && (kept & 1u)) ? 1u : 0u);
  return (uint16_t)(sign | bits);
}

/** half → float, exact (NaN → the canonical 0x7fffffff). */
inline float halfToFloat(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  uint32_t x = e == 0x1f ? (m ? 0x7fffffffu : sign | 0x7f800000u) : e ? sign | ((e + 112u) << 23) | (m << 13) : sign;
  float f;
  std::memcpy(&f, &x, 4);
  return e == 0 && m ? (sign ? -1.0f : 1.0f) * (float)m * 0x1p-24f : f;
}

/** fp32 → TF32 (10 explicit mantissa bits), to nearest with ties away from zero (PTX cvt.rna.tf32.f32). */
inline float roundTf32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7f800000u) == 0x7f800000u) return f;  // inf, NaN
  x = (x + 0x1000u) & ~0x1fffu;
  std::memcpy(&f, &x, 4);
  return f;
}

/** Element `at` of a buffer of cudaDataType `type` (CUDA_R_32F or CUDA_R_16BF) as fp32. */
float load(uint32_t type, const void* base, int64_t at);
void store(uint32_t type, void* base, int64_t at, float v);

}  // namespace span_lt

#endif
