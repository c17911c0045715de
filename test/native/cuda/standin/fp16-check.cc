// fp16 conversions of the CUDA-C emulator against CUDA's (issue 35): with -DREAL_FP16 and CUDA's
// include folder, the reference is cuda_fp16.h's own inline host code (__float2half_rn/_rz/_rd/_ru,
// __float2half, __double2half, __half2float: the software path the GPU's cvt.*.f16.f32 and
// cvt.f32.f16 agree with); without it, an independent reference here (the nearest, or directed,
// of the two neighbouring halves computed in double).
//   fp16-check [all]   all 2^32 float bit patterns, or (default) the edge cases, every float whose
//                      upper 19 bits vary with the low 13 around the rounding points, and 2^32/251
//                      strided patterns; always all 65536 half patterns (half → float, and back)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

uint16_t ours_f2h(float f, int mode);
uint16_t ours_f2h_plain(float f);
uint16_t ours_d2h(double d);
float ours_h2f(uint16_t u);

#ifdef REAL_FP16
#include <cuda_fp16.h>
static uint16_t bitsOf(__half h) {
  uint16_t u;
  memcpy(&u, &h, 2);
  return u;
}
static uint16_t ref_f2h(float f, int mode) {
  switch (mode) {
    case 0: return bitsOf(__float2half_rn(f));
    case 1: return bitsOf(__float2half_rz(f));
    case 2: return bitsOf(__float2half_rd(f));
    default: return bitsOf(__float2half_ru(f));
  }
}
static uint16_t ref_f2h_plain(float f) { return bitsOf(__float2half(f)); }
static uint16_t ref_d2h(double d) { return bitsOf(__double2half(d)); }
static float ref_h2f(uint16_t u) {
  __half h;
  memcpy(&h, &u, 2);
  return __half2float(h);
}
static const char* kRef = "cuda_fp16.h";
#else
/** The value of a half's bits (0x7c00: +inf, counted as 65536 when it is the neighbour above 65504). */
static double hval(uint16_t h, bool infAs65536) {
  const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  const double s = h & 0x8000 ? -1.0 : 1.0;
  if (e == 0x1f) return infAs65536 && !m ? s * 65536.0 : NAN;
  return s * (e ? std::ldexp(1024.0 + m, e - 25) : std::ldexp(static_cast<double>(m), -24));
}
static uint16_t ref_f2h(float f, int mode) {
  if (std::isnan(f)) return 0x7fff;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isinf(f)) return sign | 0x7c00;
  const double a = std::fabs(static_cast<double>(f));
  static double lastA = -1;  // the search below, once per value (each value is asked in six ways)
  static uint16_t lastLo = 0;
  uint16_t lo = 0;  // the largest magnitude ≤ a (0x7bff at most)
  if (a == lastA) lo = lastLo;
  else
    for (int step = 0x4000; step; step >>= 1)
      if (lo + step <= 0x7bff && hval(static_cast<uint16_t>(lo + step), false) <= a) lo = static_cast<uint16_t>(lo + step);
  lastA = a, lastLo = lo;
  const uint16_t hi = static_cast<uint16_t>(lo + 1);
  const double dl = a - hval(lo, false), dh = hval(hi, true) - a;
  bool up;
  if (dl == 0) up = false;
  else if (mode == 0) up = dh < dl || (dh == dl && (lo & 1));
  else if (mode == 1) up = false;
  else up = (mode == 2) == (sign != 0);
  return sign | (up ? hi : lo);
}
static uint16_t ref_f2h_plain(float f) { return ref_f2h(f, 0); }
static uint16_t ref_d2h(double d) { return ref_f2h(static_cast<float>(d), 0); }  // used only on doubles that are floats
static float ref_h2f(uint16_t u) {
  if ((u & 0x7fff) == 0x7c00) return u & 0x8000 ? -INFINITY : INFINITY;
  return (u & 0x7c00) == 0x7c00 ? NAN : std::copysign(static_cast<float>(hval(u, false)), u & 0x8000 ? -1.0f : 1.0f);
}
static const char* kRef = "the independent reference";
#endif

#ifdef REAL_FP16
#define SPAN_NAN_ANY false  // cuda_fp16.h: every NaN half widens to 0x7fffffff, bit for bit
#else
#define SPAN_NAN_ANY true  // the independent reference says only "NaN"
#endif
static unsigned long long checked = 0, bad = 0;

static void check(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  checked++;
  for (int mode = 0; mode < 4; mode++) {
    const uint16_t a = ours_f2h(f, mode), b = ref_f2h(f, mode);
    if (a != b && bad++ < 10) printf("MISMATCH 0x%08x mode %d: %04x vs %04x\n", x, mode, a, b);
  }
  const uint16_t p = ours_f2h_plain(f), q = ref_f2h_plain(f), d = ours_d2h(static_cast<double>(f)), e = ref_d2h(static_cast<double>(f));
  if ((p != q || d != e) && bad++ < 10) printf("MISMATCH 0x%08x: __float2half %04x vs %04x, __double2half %04x vs %04x\n", x, p, q, d, e);
}

int main(int argc, char** argv) {
  const bool all = argc > 1 && strcmp(argv[1], "all") == 0;
  if (all) {
    for (uint64_t x = 0; x <= 0xffffffffull; x++) check(static_cast<uint32_t>(x));
  } else {
    static const uint32_t lows[] = {0, 1, 0xfff, 0x1000, 0x1001, 0x1fff, 0x800, 0x7ff, 0x801, 0x17ff, 0x1800, 0x1801};
    for (uint32_t hi = 0; hi < 0x80000; hi++)
      for (uint32_t lo : lows) check(hi << 13 | lo);
    for (uint64_t x = 0; x <= 0xffffffffull; x += 251) check(static_cast<uint32_t>(x));
  }
  for (uint32_t u = 0; u < 0x10000; u++) {  // half → float, all patterns; back to half
    const float f = ours_h2f(static_cast<uint16_t>(u)), g = ref_h2f(static_cast<uint16_t>(u));
    uint32_t x, y;
    memcpy(&x, &f, 4);
    memcpy(&y, &g, 4);
    if (x != y && !(std::isnan(f) && std::isnan(g) && SPAN_NAN_ANY) && bad++ < 10) printf("MISMATCH half %04x → float %08x vs %08x\n", u, x, y);
    const bool nan = (u & 0x7c00) == 0x7c00 && (u & 0x3ff);
    if (ours_f2h(f, 0) != (nan ? 0x7fff : u) && bad++ < 10) printf("MISMATCH half %04x → float → half %04x\n", u, ours_f2h(f, 0));
    checked++;
  }
  // double → half rounds once: a double just above the midpoint of 1 and 1 + 2^-10 that is no float rounds up
  const double tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  if (ours_d2h(tie) != 0x3c01 && bad++ < 10) printf("MISMATCH double rounding: %04x\n", ours_d2h(tie));
#ifdef REAL_FP16
  if (ours_d2h(tie) != ref_d2h(tie) && bad++ < 10) printf("MISMATCH double rounding vs cuda_fp16.h: %04x\n", ref_d2h(tie));
#endif
  printf("{\"reference\":\"%s\",\"checked\":%llu,\"mismatches\":%llu}\n", kRef, checked, bad);
  return bad != 0;
}
