// bf16 conversions of the CUDA-C emulator against CUDA's: with -DREAL_BF16 and CUDA's include
// folder, the reference is cuda_bf16.h's own host code (the software path the GPU's
// cvt.rn.bf16.f32 agrees with: round to nearest even, every NaN to the canonical 0x7fff);
// without it, an independent reference here (nearest of the two neighbours, ties to even).
//   bf16-check [all]    all 2^32 float bit patterns, or (default) the edge cases, every upper
//                       half with 12 lower halves around the rounding points, and 2^24 strided patterns
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

uint16_t ours_f2bf(float f);
uint16_t ours_f2bf_rz(float f);
uint16_t ours_d2bf(double d);
float ours_bf2f(uint16_t u);

#ifdef REAL_BF16
#include <cuda_bf16.h>
static uint16_t ref_f2bf(float f) {
  __nv_bfloat16 b = __float2bfloat16(f);
  uint16_t u;
  memcpy(&u, &b, 2);
  return u;
}
static uint16_t ref_f2bf_rz(float f) {
  __nv_bfloat16 b = __float2bfloat16_rz(f);
  uint16_t u;
  memcpy(&u, &b, 2);
  return u;
}
static const char* kRef = "cuda_bf16.h";
#else
static double value(uint32_t bits) {  // a bf16 pattern in the upper half; 0x7f80 above the largest finite counts as 2^128
  if ((bits & 0x7fffffffu) == 0x7f800000u) return (bits >> 31 ? -1.0 : 1.0) * std::ldexp(1.0, 128);
  float f;
  memcpy(&f, &bits, 4);
  return f;
}
static uint16_t ref_f2bf(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if (std::isnan(f)) return 0x7fff;
  if (std::isinf(f)) return static_cast<uint16_t>(x >> 16);
  uint32_t lo = x & 0xffff0000u, hi = lo + 0x10000u;
  double dl = std::fabs(f - value(lo)), dh = std::fabs(value(hi) - f);
  return static_cast<uint16_t>((dl < dh || (dl == dh && !(lo & 0x10000u)) ? lo : hi) >> 16);
}
static uint16_t ref_f2bf_rz(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return std::isnan(f) ? 0x7fff : static_cast<uint16_t>(x >> 16);
}
static const char* kRef = "the independent reference";
#endif

static unsigned long long checked = 0, bad = 0;

static void check(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  checked++;
  uint16_t a = ours_f2bf(f), b = ref_f2bf(f), c = ours_f2bf_rz(f), d = ref_f2bf_rz(f);
  uint16_t e = std::isnan(f) ? 0x7fff : ours_d2bf(static_cast<double>(f));  // exact double: the same rounding
  if ((a != b || c != d || e != b) && bad++ < 10) printf("MISMATCH 0x%08x: rn %04x vs %04x, rz %04x vs %04x, from double %04x\n", x, a, b, c, d, e);
}

int main(int argc, char** argv) {
  bool all = argc > 1 && strcmp(argv[1], "all") == 0;
  if (all) {
    for (uint64_t x = 0; x <= 0xffffffffull; x++) check(static_cast<uint32_t>(x));
  } else {
    static const uint32_t lows[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4000, 0xc000, 0x7ffe, 0x8002, 0x0100, 0xfffe};
    for (uint32_t hi = 0; hi < 0x10000; hi++)
      for (uint32_t lo : lows) check(hi << 16 | lo);
    for (uint64_t x = 0; x <= 0xffffffffull; x += 251) check(static_cast<uint32_t>(x));
  }
  for (uint32_t u = 0; u < 0x10000; u++) {  // bf16 → float is exact: the bits moved up
    float f = ours_bf2f(static_cast<uint16_t>(u));
    uint32_t x;
    memcpy(&x, &f, 4);
    if (x != u << 16 && bad++ < 10) printf("MISMATCH bf16 %04x → float %08x\n", u, x);
  }
  // double → bf16 rounds once (a double halfway between two bf16 but not a float must not round twice)
  double tie = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30);  // above the midpoint of 1 and 1+2^-7: rounds up
  if (ours_d2bf(tie) != 0x3f81 && bad++ < 10) printf("MISMATCH double rounding: %04x\n", ours_d2bf(tie));
  printf("{\"reference\":\"%s\",\"checked\":%llu,\"mismatches\":%llu}\n", kRef, checked, bad);
  return bad != 0;
}
