// bfloat16 for the CUDA-C emulator: the part of CUDA's cuda_bf16.h span's kernels use, with
// conversions bit-exact with CUDA's (__float2bfloat16 rounds to nearest even, every NaN becomes
// the canonical 0x7fff as cvt.rn.bf16.f32 and cuda_bf16.hpp's host path give; __bfloat162float
// is exact). Arithmetic is done in double and rounded once (the exact result for + - * of two
// bf16 except when their exponents differ by more than ~45, where a GPU's fma.rn.bf16 may round
// a tie differently). Test-only code.
#ifndef SPAN_EMU_CUDA_BF16_H
#define SPAN_EMU_CUDA_BF16_H

#include "span_emu_prelude.h"

struct __nv_bfloat16_raw {
  unsigned short x;
};

static inline unsigned short span_emu_f2bf_rn(float f) {
  uint32_t x = span_emu_bits<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // NaN: canonical, sign dropped
  uint32_t rest = x & 0xffffu, up = rest > 0x8000u || (rest == 0x8000u && (x & 0x10000u));
  return static_cast<unsigned short>((x >> 16) + up);
}

/** double → bf16, rounded once: to float rounding to odd (exact when it fits), then to nearest even. */
static inline unsigned short span_emu_d2bf_rn(double d) {
  if (d != d) return 0x7fffu;
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && f == f && !__builtin_isinf(f)) {
    if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
    f = span_emu_bits<float>(span_emu_bits<uint32_t>(f) | 1u);
  } else if (__builtin_isinf(f) && !__builtin_isinf(d)) {
    f = span_emu_bits<float>(span_emu_bits<uint32_t>(f) - 1u);  // beyond FLT_MAX: rounds to infinity below
  }
  return span_emu_f2bf_rn(f);
}

struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
  __nv_bfloat16(float f) : __x(span_emu_f2bf_rn(f)) {}
  __nv_bfloat16(double d) : __x(span_emu_d2bf_rn(d)) {}
  __nv_bfloat16(int i) : __x(span_emu_d2bf_rn(i)) {}
  __nv_bfloat16(unsigned int i) : __x(span_emu_d2bf_rn(i)) {}
  __nv_bfloat16(long long i) : __x(span_emu_d2bf_rn(static_cast<double>(i))) {}
  operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
  operator float() const { return span_emu_bits<float>(static_cast<uint32_t>(__x) << 16); }
};
typedef __nv_bfloat16 nv_bfloat16;

struct __align__(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
typedef __nv_bfloat162 nv_bfloat162;

static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16_raw{u}; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __ushort_as_bfloat16(span_emu_f2bf_rn(f)); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __ushort_as_bfloat16(span_emu_f2bf_rn(f)); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) {
  uint32_t x = span_emu_bits<uint32_t>(f);
  return __ushort_as_bfloat16((x & 0x7fffffffu) > 0x7f800000u ? 0x7fffu : static_cast<unsigned short>(x >> 16));
}
static inline __nv_bfloat16 __double2bfloat16(double d) { return __ushort_as_bfloat16(span_emu_d2bf_rn(d)); }
static inline float __bfloat162float(__nv_bfloat16 h) { return static_cast<float>(h); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162{__float2bfloat16(a), __float2bfloat16(b)}; }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __floats2bfloat162_rn(f.x, f.y); }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162{a, b}; }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162{a, a}; }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162{a, b}; }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return float2{static_cast<float>(h.x), static_cast<float>(h.y)}; }
static inline float __low2float(__nv_bfloat162 h) { return static_cast<float>(h.x); }
static inline float __high2float(__nv_bfloat162 h) { return static_cast<float>(h.y); }

#define SPAN_EMU_BF16_OP(name, op) \
  static inline __nv_bfloat16 name(__nv_bfloat16 a, __nv_bfloat16 b) { return __double2bfloat16(static_cast<double>(static_cast<float>(a)) op static_cast<float>(b)); }
SPAN_EMU_BF16_OP(__hadd, +)
SPAN_EMU_BF16_OP(__hsub, -)
SPAN_EMU_BF16_OP(__hmul, *)
SPAN_EMU_BF16_OP(__hdiv, /)
static inline __nv_bfloat16 __hfma(__nv_bfloat16 a, __nv_bfloat16 b, __nv_bfloat16 c) {
  return __double2bfloat16(static_cast<double>(static_cast<float>(a)) * static_cast<float>(b) + static_cast<float>(c));
}
static inline __nv_bfloat16 __hneg(__nv_bfloat16 a) { return __ushort_as_bfloat16(a.__x ^ 0x8000u); }
static inline __nv_bfloat16 __habs(__nv_bfloat16 a) { return __ushort_as_bfloat16(a.__x & 0x7fffu); }
static inline __nv_bfloat16 __hmax(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(fmaxf(a, b)); }
static inline __nv_bfloat16 __hmin(__nv_bfloat16 a, __nv_bfloat16 b) { return __float2bfloat16(fminf(a, b)); }
static inline __nv_bfloat16 operator+(__nv_bfloat16 a, __nv_bfloat16 b) { return __hadd(a, b); }
static inline __nv_bfloat16 operator-(__nv_bfloat16 a, __nv_bfloat16 b) { return __hsub(a, b); }
static inline __nv_bfloat16 operator*(__nv_bfloat16 a, __nv_bfloat16 b) { return __hmul(a, b); }
static inline __nv_bfloat16 operator/(__nv_bfloat16 a, __nv_bfloat16 b) { return __hdiv(a, b); }
static inline __nv_bfloat16 operator-(__nv_bfloat16 a) { return __hneg(a); }
static inline __nv_bfloat16& operator+=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hadd(a, b); }
static inline __nv_bfloat16& operator-=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hsub(a, b); }
static inline __nv_bfloat16& operator*=(__nv_bfloat16& a, __nv_bfloat16 b) { return a = __hmul(a, b); }
static inline bool operator==(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) == static_cast<float>(b); }
static inline bool operator!=(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) != static_cast<float>(b); }
static inline bool operator<(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) < static_cast<float>(b); }
static inline bool operator>(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) > static_cast<float>(b); }
static inline bool operator<=(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) <= static_cast<float>(b); }
static inline bool operator>=(__nv_bfloat16 a, __nv_bfloat16 b) { return static_cast<float>(a) >= static_cast<float>(b); }

#endif
