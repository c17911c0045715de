// fp32 → bf16 conversion of matrix-product operands and the CPU's bf16 capability.
#pragma once
#include <cstddef>
#include <cstdint>
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace span {

/**
 * out[i] = the bf16 bits of round_bf16(x[i]) (gemm.h: round to nearest, ties to even, every NaN to
 * the canonical 0x7fff, subnormals kept), bit for bit. Vectorised: avx512_bf16's vcvtne2ps2bf16
 * where the CPU has it (with the integer path for blocks holding a NaN or a subnormal, which that
 * instruction canonicalises differently and flushes to zero), AVX-512F integer rounding elsewhere.
 */
void to_bf16(const float* x, uint16_t* out, size_t n);
/** The same on the portable scalar path (the reference the vector paths are tested against). */
void to_bf16_scalar(const float* x, uint16_t* out, size_t n);
/** Which conversion to_bf16 runs: "avx512_bf16", "avx512f" or "scalar". */
const char* to_bf16_isa();

/** The CPU's bf16 dot products: "amx" (AMX-BF16 tiles), "avx512_bf16" (vdpbf16ps) or "none". */
const char* bf16_capability();

/** Whether the CPU and the OS run AVX-512 F, BW, VL and DQ; and with it avx512_bf16 (vdpbf16ps). */
bool cpu_has_avx512();
bool cpu_has_avx512_bf16();

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/** 16 lanes rounded as round_bf16, the bits in 16-bit lanes (for kernels that convert while they pack). */
__attribute__((target("avx512f,avx512bw"))) inline __m256i round16(__m512 v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
  __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff))), 16);
  const __m512i mag = _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7f800000));
  r = _mm512_mask_mov_epi32(r, nan, _mm512_set1_epi32(0x7fff));
  return _mm512_cvtepi32_epi16(r);
}
#endif

}  // namespace span
