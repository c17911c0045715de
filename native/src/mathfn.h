// Vectorisable float32 exp and erf, and the dropout generator, shared by the elementwise (ops.cc) and fused (fused.cc) kernels.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace span {

/**
 * exp(x) in float32 as a branch-free polynomial the compiler vectorises (libm's expf is a
 * call per element): Cephes expf, x = n·ln2 + r with |r| <= ln2/2 split in two constants,
 * exp(r) by a degree-6 polynomial, times 2^n applied as two halves 2^⌊n/2⌋·2^(n−⌊n/2⌋) so
 * results near overflow and in the denormal range are right. Within 2 ulp of expf; +inf
 * above ln(FLT_MAX), 0 below ln of the smallest denormal, NaN stays NaN.
 */
inline float fast_exp(float x) {
  float c = x < -103.9f ? -103.9f : x;  // ternaries and the 1.5·2²³ rounding trick (not std::floor) keep it vectorisable
  c = c > 88.8f ? 88.8f : c;
  float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest
  float r = c - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float y = p * r * r + r + 1.0f;
  int32_t ni = static_cast<int32_t>(n);
  int32_t half = ni >> 1;
  int32_t b1 = (half + 127) << 23, b2 = (ni - half + 127) << 23;
  float s1, s2;
  std::memcpy(&s1, &b1, sizeof s1);
  std::memcpy(&s2, &b2, sizeof s2);
  y = y * s1 * s2;
  y = x > 88.72283f ? INFINITY : y;
  y = x < -103.97208f ? 0.0f : y;
  return x != x ? x : y;
}

/**
 * erf as tfjs-backend-cpu's Erf kernel computes it (Abramowitz & Stegun 7.1.26, |error| <
 * 1.5e-7): sign(x)·(1 − t(a1 + t(a2 + t(a3 + t(a4 + t·a5))))·e^(−x²)), t = 1/(1 + p|x|);
 * with fast_exp it vectorises (libm's erff does not).
 */
inline float fast_erf(float x) {
  float ax = std::fabs(x);
  float t = 1.0f / (1.0f + 0.3275911f * ax);
  float poly = t * (0.254829592f + t * (-0.284496736f + t * (1.421413741f + t * (-1.453152027f + t * 1.061405429f))));
  float y = 1.0f - poly * fast_exp(-ax * ax);
  return x < 0 ? -y : y;
}

// SplitMix64: a counter-based generator, so chunks can be filled in parallel and the mask
// depends only on (seed, index).
inline uint64_t splitmix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** Whether dropout keeps element i of the stream splitmix(seed) (base): a 24-bit uniform below keep. */
inline bool dropout_keeps(uint64_t base, size_t i, float keep) {
  return static_cast<float>(splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep;
}

}  // namespace span
