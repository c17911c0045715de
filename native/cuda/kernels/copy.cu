// Strided copies of 4-byte elements (float32, int32, bool-as-int32): tfjs Transpose, Slice,
// StridedSlice's plain cases, SplitV, Concat, Pack, PadV2's interior, BroadcastTo, and Tile.
// The copied region has sizes d0..d5 (right-aligned, leading 1s); element (c0..c5) moves from
// src[srcOffset + Σ c_k·s_k] to dst[dstOffset + Σ c_k·t_k]. One thread per element, grid-stride.
//
// CPU reference: for every index c of the region: dst[dOff + c·t] = src[sOff + c·s].
#define SPAN_DIMS long long d0, long long d1, long long d2, long long d3, long long d4, long long d5
#define SPAN_LOOP for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)

extern "C" __global__ void span_strided_copy(const unsigned* src, unsigned* dst, long long n, long long srcOffset, long long dstOffset, SPAN_DIMS,
                                             long long s0, long long s1, long long s2, long long s3, long long s4, long long s5, long long t0,
                                             long long t1, long long t2, long long t3, long long t4, long long t5) {
  const long long d[6] = {d0, d1, d2, d3, d4, d5};
  const long long s[6] = {s0, s1, s2, s3, s4, s5};
  const long long t[6] = {t0, t1, t2, t3, t4, t5};
  SPAN_LOOP {
    long long rest = i, from = srcOffset, to = dstOffset;
    for (int k = 5; k >= 0; k--) {
      const long long c = rest % d[k];
      rest /= d[k];
      from += c * s[k];
      to += c * t[k];
    }
    dst[to] = src[from];
  }
}

/** Tile: out (sizes d, contiguous) from x (sizes e, strides s): out[c] = x[c mod e]. */
extern "C" __global__ void span_tile(const unsigned* x, unsigned* out, long long n, SPAN_DIMS, long long e0, long long e1, long long e2, long long e3,
                                     long long e4, long long e5, long long s0, long long s1, long long s2, long long s3, long long s4,
                                     long long s5) {
  const long long d[6] = {d0, d1, d2, d3, d4, d5};
  const long long e[6] = {e0, e1, e2, e3, e4, e5};
  const long long s[6] = {s0, s1, s2, s3, s4, s5};
  SPAN_LOOP {
    long long rest = i, from = 0;
    for (int k = 5; k >= 0; k--) {
      from += ((rest % d[k]) % e[k]) * s[k];
      rest /= d[k];
    }
    out[i] = x[from];
  }
}
