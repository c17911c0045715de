// IEEE half precision for the CUDA-C emulator: the part of CUDA's cuda_fp16.h span's kernels use,
// with conversions bit-exact with CUDA's (checked against the real header's host functions on
// every float and every half pattern by test/native/cuda/standin/fp16-header.test.ts):
//   float → half: cvt.rn/rz/rm/rp.f16.f32: to nearest even (or toward zero, down, up); subnormal
//     halves kept; past the largest finite half (65504) to ±inf when the rounding goes there and
//     to ±65504 when it does not (toward zero, or away from the value's side); ±inf stays; every
//     NaN becomes the canonical 0x7fff (sign dropped).
//   half → float: exact; a NaN becomes the canonical float NaN 0x7fffffff (sign dropped), as
//     cvt.f32.f16 and cuda_fp16.hpp's host path give.
//   double → half: rounded once, to nearest even.
// Arithmetic is done in double and rounded once (+ − × of two halves are exact in double, so the
// result is the correctly rounded one a GPU's add.f16/mul.f16 give). Test-only code.
#ifndef SPAN_EMU_CUDA_FP16_H
#define SPAN_EMU_CUDA_FP16_H

#include "span_emu_prelude.h"

struct __half_raw {
  unsigned short x;
};

namespace span_emu_fp16 {
/** The half nearest toward zero (its bits with the sign), and whether the value was exact, above (by more than half an ulp), a tie, or below. */
struct Cut {
  unsigned short bits;
  bool negative;
  int rest;  // 0 exact, 1 below half an ulp, 2 a tie, 3 above
};

static inline Cut cut(float f) {
  const uint32_t x = span_emu_bits<uint32_t>(f), mag = x & 0x7fffffffu;
  const unsigned short sign = static_cast<unsigned short>((x >> 16) & 0x8000u);
  if (mag >= 0x7f800000u) return Cut{static_cast<unsigned short>(mag == 0x7f800000u ? sign | 0x7c00u : 0x7fffu), false, 0};
  if (mag > 0x477fefffu) return Cut{static_cast<unsigned short>(sign | 0x7bffu), sign != 0, 3};  // ≥ 65520: beyond the largest's halfway
  const int e = static_cast<int>(mag >> 23) - 127;                                                  // the float's unbiased exponent
  if (mag < 0x33000001u) return Cut{sign, sign != 0, mag == 0 ? 0 : mag == 0x33000000u ? 2 : 1};      // |f| ≤ 2^-25: 0 below, a tie at 2^-25
  // the value in units of the smallest subnormal 2^-24 (normal halves: in units of their own ulp)
  const uint32_t m = (mag & 0x7fffffu) | 0x800000u;
  const int shift = e >= -14 ? 13 : 13 + (-14 - e);  // mantissa bits dropped
  const uint32_t kept = m >> shift, dropped = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  const uint32_t bits = e >= -14 ? (static_cast<uint32_t>(e + 15) << 10) + (kept & 0x3ffu) : kept;
  return Cut{static_cast<unsigned short>(sign | bits), sign != 0, dropped == 0 ? 0 : dropped < half ? 1 : dropped == half ? 2 : 3};
}

/** The conversion under a rounding: 0 to nearest even, 1 toward zero, 2 down, 3 up. */
static inline unsigned short f2h(float f, int mode) {
  const Cut c = cut(f);
  if (c.rest == 0) return c.bits;
  bool up;  // one ulp away from zero
  switch (mode) {
    case 0: up = c.rest == 3 || (c.rest == 2 && (c.bits & 1u)); break;
    case 1: up = false; break;
    case 2: up = c.negative; break;
    default: up = !c.negative; break;
  }
  return static_cast<unsigned short>(c.bits + (up ? 1u : 0u));  // 0x7bff + 1 = 0x7c00: inf
}

static inline float h2f(unsigned short h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return span_emu_bits<float>(m ? 0x7fffffffu : sign | 0x7f800000u);
  if (e == 0) return span_emu_bits<float>(sign) + (sign ? -1.0f : 1.0f) * static_cast<float>(m) * 0x1p-24f;  // exact: m < 2^10
  return span_emu_bits<float>(sign | ((e + 112u) << 23) | (m << 13));
}

/** double → half, rounded once: to float rounding to odd (24 bits, ≥ 11 + 2: no double rounding), then to nearest even. */
static inline unsigned short d2h(double d) {
  if (d != d) return 0x7fffu;
  float f = static_cast<float>(d);
  if (static_cast<double>(f) != d && !__builtin_isinf(f)) {
    if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
    f = span_emu_bits<float>(span_emu_bits<uint32_t>(f) | 1u);
  }
  return f2h(f, 0);  // a double past FLT_MAX became inf: inf as a half too
}
}  // namespace span_emu_fp16

struct __half {
  unsigned short __x;
  __half() = default;
  __half(const __half_raw& r) : __x(r.x) {}
  __half(float f) : __x(span_emu_fp16::f2h(f, 0)) {}
  __half(double d) : __x(span_emu_fp16::d2h(d)) {}
  __half(int i) : __x(span_emu_fp16::d2h(i)) {}
  __half(unsigned int i) : __x(span_emu_fp16::d2h(i)) {}
  __half(long long i) : __x(span_emu_fp16::d2h(static_cast<double>(i))) {}
  operator __half_raw() const { return __half_raw{__x}; }
  operator float() const { return span_emu_fp16::h2f(__x); }
};
typedef __half half;

struct __align__(4) __half2 {
  __half x, y;
};
typedef __half2 half2;

static inline __half __ushort_as_half(unsigned short u) { return __half_raw{u}; }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline short __half_as_short(__half h) { return static_cast<short>(h.__x); }
static inline __half __short_as_half(short s) { return __half_raw{static_cast<unsigned short>(s)}; }
static inline __half __float2half(float f) { return __ushort_as_half(span_emu_fp16::f2h(f, 0)); }
static inline __half __float2half_rn(float f) { return __ushort_as_half(span_emu_fp16::f2h(f, 0)); }
static inline __half __float2half_rz(float f) { return __ushort_as_half(span_emu_fp16::f2h(f, 1)); }
static inline __half __float2half_rd(float f) { return __ushort_as_half(span_emu_fp16::f2h(f, 2)); }
static inline __half __float2half_ru(float f) { return __ushort_as_half(span_emu_fp16::f2h(f, 3)); }
static inline __half __double2half(double d) { return __ushort_as_half(span_emu_fp16::d2h(d)); }
static inline float __half2float(__half h) { return span_emu_fp16::h2f(h.__x); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2{__float2half_rn(a), __float2half_rn(b)}; }
static inline __half2 __float2half2_rn(float a) { return __floats2half2_rn(a, a); }
static inline __half2 __float22half2_rn(float2 f) { return __floats2half2_rn(f.x, f.y); }
static inline __half2 __halves2half2(__half a, __half b) { return __half2{a, b}; }
static inline __half2 __half2half2(__half a) { return __half2{a, a}; }
static inline __half2 make_half2(__half a, __half b) { return __half2{a, b}; }
static inline float2 __half22float2(__half2 h) { return float2{__half2float(h.x), __half2float(h.y)}; }
static inline float __low2float(__half2 h) { return __half2float(h.x); }
static inline float __high2float(__half2 h) { return __half2float(h.y); }
static inline bool __hisnan(__half h) { return (h.__x & 0x7fffu) > 0x7c00u; }
static inline int __hisinf(__half h) { return h.__x == 0x7c00u ? 1 : h.__x == 0xfc00u ? -1 : 0; }

#define SPAN_EMU_FP16_OP(name, op) \
  static inline __half name(__half a, __half b) { return __double2half(static_cast<double>(__half2float(a)) op __half2float(b)); }
SPAN_EMU_FP16_OP(__hadd, +)
SPAN_EMU_FP16_OP(__hsub, -)
SPAN_EMU_FP16_OP(__hmul, *)
SPAN_EMU_FP16_OP(__hdiv, /)
static inline __half __hfma(__half a, __half b, __half c) {
  return __double2half(static_cast<double>(__half2float(a)) * __half2float(b) + __half2float(c));  // exact product and sum in double, one rounding
}
static inline __half __hneg(__half a) { return __ushort_as_half(a.__x ^ 0x8000u); }
static inline __half __habs(__half a) { return __ushort_as_half(a.__x & 0x7fffu); }
static inline __half __hmax(__half a, __half b) { return __float2half(fmaxf(a, b)); }
static inline __half __hmin(__half a, __half b) { return __float2half(fminf(a, b)); }
static inline __half operator+(__half a, __half b) { return __hadd(a, b); }
static inline __half operator-(__half a, __half b) { return __hsub(a, b); }
static inline __half operator*(__half a, __half b) { return __hmul(a, b); }
static inline __half operator/(__half a, __half b) { return __hdiv(a, b); }
static inline __half operator-(__half a) { return __hneg(a); }
static inline __half& operator+=(__half& a, __half b) { return a = __hadd(a, b); }
static inline __half& operator-=(__half& a, __half b) { return a = __hsub(a, b); }
static inline __half& operator*=(__half& a, __half b) { return a = __hmul(a, b); }
static inline bool operator==(__half a, __half b) { return __half2float(a) == __half2float(b); }
static inline bool operator!=(__half a, __half b) { return __half2float(a) != __half2float(b); }
static inline bool operator<(__half a, __half b) { return __half2float(a) < __half2float(b); }
static inline bool operator>(__half a, __half b) { return __half2float(a) > __half2float(b); }
static inline bool operator<=(__half a, __half b) { return __half2float(a) <= __half2float(b); }
static inline bool operator>=(__half a, __half b) { return __half2float(a) >= __half2float(b); }

#endif
