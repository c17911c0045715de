// SpanDropout on the cuda backend (inverted dropout), and attention's dropout of the probabilities:
// the mask is a pure function of (seed, element index), the same bits as native/src/mathfn.h
// dropout_keeps and native/src/ops.cc dropout, so the cuda and native backends drop the same
// elements, and a backward pass regenerates the forward mask by calling this again with the seed.
//
// The bits: base = SplitMix64(seed); element i is kept iff
//   (float)(SplitMix64(base + i) >> 40) · 2⁻²⁴ < keep        (the top 24 bits as a uniform in [0, 1))
// with SplitMix64(z): z += 0x9e3779b97f4a7c15; z = (z ^ z>>30)·0xbf58476d1ce4e5b9;
//   z = (z ^ z>>27)·0x94d049bb133111eb; z ^ z>>31 (Steele, Lea & Flood 2014; Vigna's splitmix64.c).
// out[i] = kept ? x[i]·(1/keep) : 0. For attention, i is the flat index into probs [B, A, T, T].
// Counter-based like Philox (issue 21's fused attention draws from the same function per element).
// Any grid and block (grid-stride); out may be x. The seed is read from device memory (seedp, an 8-byte
// block the backend uploads per launch), so a captured CUDA graph reads each step's seed as data.

static __device__ __forceinline__ unsigned long long dropout_splitmix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

extern "C" __global__ void span_dropout_f32(const float* x, float* out, long long n, float keep, const unsigned long long* __restrict__ seedp) {
  const unsigned long long base = dropout_splitmix(*seedp);
  const float scale = 1.0f / keep;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const bool kept = (float)(dropout_splitmix(base + (unsigned long long)i) >> 40) * (1.0f / 16777216.0f) < keep;
    out[i] = kept ? x[i] * scale : 0.0f;
  }
}
