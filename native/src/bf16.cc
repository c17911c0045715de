// fp32 → bf16 conversion (see bf16.h). The rounding is gemm.cc's round_bf16 (itself the cuda
// backend's cast_bf16.cu): u + 0x7fff + ((u >> 16) & 1), the high half; NaN → 0x7fff.
#include "bf16.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SPAN_X86 1
#endif

namespace span {

namespace {

inline uint16_t bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fff;
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

#ifdef SPAN_X86
struct Cpu {
  bool avx512 = false, avx512_bf16 = false, amx_bf16 = false;
  Cpu() {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(1, 0, &a, &b, &c, &d) || !(c & (1u << 27))) return;  // OSXSAVE
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    bool zmm = (lo & 0xe6u) == 0xe6u;             // the OS saves ymm, opmask and zmm state
    bool tiles = (lo & 0x60000u) == 0x60000u;     // XTILECFG and XTILEDATA
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    avx512 = zmm && (b & (1u << 16)) && (b & (1u << 30)) && (b & (1u << 31)) && (b & (1u << 17));  // F, BW, VL, DQ
    amx_bf16 = tiles && (d & (1u << 22)) && (d & (1u << 24));                                          // AMX-BF16, AMX-TILE
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) avx512_bf16 = avx512 && (a & (1u << 5));
  }
};
const Cpu& cpu() {
  static const Cpu c;
  return c;
}

__attribute__((target("avx512f,avx512bw"))) void to_bf16_avx512f(const float* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16) _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), round16(_mm512_loadu_ps(x + i)));
  for (; i < n; i++) out[i] = bf16_bits(x[i]);
}

/** Lanes that vcvtne2ps2bf16 treats unlike bf16_bits: NaN (kept quiet, not canonical) and subnormals (flushed). */
__attribute__((target("avx512f"))) inline __mmask16 special(__m512 v) {
  const __m512i mag = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(mag, _mm512_set1_epi32(0x7f800000));
  const __mmask16 sub = _mm512_cmplt_epu32_mask(_mm512_sub_epi32(mag, _mm512_set1_epi32(1)), _mm512_set1_epi32(0x007fffff));
  return nan | sub;
}

__attribute__((target("avx512f,avx512bw,avx512bf16"))) void to_bf16_avx512bf16(const float* x, uint16_t* out, size_t n) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(x + i), hi = _mm512_loadu_ps(x + i + 16);
    if ((special(lo) | special(hi)) == 0) {
      _mm512_storeu_si512(out + i, (__m512i)_mm512_cvtne2ps_pbh(hi, lo));  // lanes 0-15 from lo
    } else {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), round16(lo));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 16), round16(hi));
    }
  }
  to_bf16_avx512f(x + i, out + i, n - i);
}
#endif

}  // namespace

void to_bf16_scalar(const float* x, uint16_t* out, size_t n) {
  for (size_t i = 0; i < n; i++) out[i] = bf16_bits(x[i]);
}

void to_bf16(const float* x, uint16_t* out, size_t n) {
#ifdef SPAN_X86
  if (cpu().avx512_bf16) return to_bf16_avx512bf16(x, out, n);
  if (cpu().avx512) return to_bf16_avx512f(x, out, n);
#endif
  to_bf16_scalar(x, out, n);
}

const char* to_bf16_isa() {
#ifdef SPAN_X86
  if (cpu().avx512_bf16) return "avx512_bf16";
  if (cpu().avx512) return "avx512f";
#endif
  return "scalar";
}

bool cpu_has_avx512() {
#ifdef SPAN_X86
  return cpu().avx512;
#else
  return false;
#endif
}

bool cpu_has_avx512_bf16() {
#ifdef SPAN_X86
  return cpu().avx512_bf16;
#else
  return false;
#endif
}

const char* bf16_capability() {
#ifdef SPAN_X86
  if (cpu().amx_bf16) return "amx";
  if (cpu().avx512_bf16) return "avx512_bf16";
#endif
  return "none";
}

}  // namespace span
