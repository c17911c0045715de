// SpanAttention on the cuda backend, fused (issue 21 item 2): multi-head self-attention in one
// kernel with an online softmax over key tiles (FlashAttention, Dao et al. 2022, Algorithm 1;
// FlashAttention-2, Dao 2023, §3.1: the rescaling by exp(m_old − m_new) and one division at the
// end), the additive padding mask and the probabilities' dropout, keeping only ctx and the row
// log-sum-exp. No [B, A, T, T] tensor exists. It replaces the score and context GEMMs,
// attention_softmax.cu and the probabilities' dropout of the simple path (kernels-attention.ts),
// and equals native/src/fused.cc attention_forward and fused-composite.ts attention:
//
// CPU reference, per batch entry b, head h (columns h·d … h·d+d−1 of [T, H]), query row t:
//   u[s]   = (Σ_c q[b,t,h·d+c]·k[b,s,h·d+c])·scale + mask[b,s]          (scale = 1/√d)
//   lse[t] = max_s u + log Σ_s exp(u[s] − max_s u)                        saved [B, A, T]
//   P[s]   = exp(u[s] − lse[t]);  z[s] = keeps(i)/keep or 0, i = ((b·A + h)·T + t)·T + s
//   ctx[b,t,h·d+c] = Σ_s P[s]·z[s]·v[b,s,h·d+c]
// keeps(i): base = SplitMix64(seed), kept iff (float)(SplitMix64(base + i) >> 40)·2⁻²⁴ < keep, the
// bits of native/src/mathfn.h dropout_keeps and dropout.cu (keep ≥ 1: nothing dropped). The
// backward kernels (flash_attention_backward.cu) redraw the same z from the same index.
//
// Plain fp32 FMA, no tensor cores: one thread per query row, the block's SPAN_FA_N rows share each
// key tile (K, V and the mask of SPAN_FA_N keys) in shared memory; per tile the thread computes its
// scores, the new running max m, rescales its running sum l and its d accumulators by
// exp(m_old − m), then adds exp(u − m)·z·V. At the end ctx = o / l and lse = m + log l.
// Compile-time sizes (NVRTC -D): SPAN_FA_D = d (head width), SPAN_FA_N = threads per block = query
// rows per block = keys per tile; shared memory (2·N·D + N)·4 bytes (N = 64, D = 64: 33 KiB).
// Launch: grid (⌈T/N⌉, A, B), block (N, 1, 1). Deterministic (fixed order, no atomics).
// A mask of −∞ is allowed (span's is 0 or −10000): a key tile whose every score is −∞ adds nothing
// (the rescaling factor is 1 while every key so far is −∞, not exp(−∞ + ∞) = NaN); a row whose every
// key is −∞ gives ctx = 0 and lse = −∞ (the backward kernels then give P = 0).

#ifndef SPAN_FA_D
#define SPAN_FA_D 64
#endif
#ifndef SPAN_FA_N
#define SPAN_FA_N 64
#endif

static __device__ __forceinline__ unsigned long long fa_splitmix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// q, k, v, ctx [B, T, A·D]; mask [B, T] (additive); lse [B, A, T].
extern "C" __global__ void __launch_bounds__(SPAN_FA_N)
    span_flash_attention_forward_f32(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                     const float* __restrict__ mask, float* __restrict__ ctx, float* __restrict__ lse, int T, int A,
                                     float scale, float keep, const unsigned long long* __restrict__ seedp) {
  __shared__ float Ks[SPAN_FA_N * SPAN_FA_D], Vs[SPAN_FA_N * SPAN_FA_D], Ms[SPAN_FA_N];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, t = blockIdx.x * SPAN_FA_N + threadIdx.x;
  const bool row = t < T;
  const unsigned long long base = fa_splitmix(*seedp), first = ((unsigned long long)(b * A + h) * T + (row ? t : 0)) * T;
  const float invKeep = 1.0f / keep;
  float qr[SPAN_FA_D], o[SPAN_FA_D], sc[SPAN_FA_N];
  const float* qp = q + (b * T + (row ? t : 0)) * H + h * SPAN_FA_D;
  for (int c = 0; c < SPAN_FA_D; c++) qr[c] = qp[c], o[c] = 0.0f;
  float m = __int_as_float(0xff800000), l = 0.0f;  // −∞, 0
  for (int s0 = 0; s0 < T; s0 += SPAN_FA_N) {
    const int cnt = min(SPAN_FA_N, T - s0);
    // Repeated on purpose in flash_attention_backward.cu (the K, V and mask tile load): each .cu is compiled alone by NVRTC, with no header of span's to share.
    __syncthreads();  // every thread is done with the previous tile
    for (int i = threadIdx.x; i < cnt * SPAN_FA_D; i += SPAN_FA_N) {
      const long long g = (b * T + s0 + i / SPAN_FA_D) * H + h * SPAN_FA_D + i % SPAN_FA_D;
      Ks[i] = k[g], Vs[i] = v[g];
    }
    if (threadIdx.x < cnt) Ms[threadIdx.x] = mask[b * T + s0 + threadIdx.x];
    __syncthreads();
    if (!row) continue;
    float mt = m;
    for (int j = 0; j < cnt; j++) {
      float dot = 0.0f;
      for (int c = 0; c < SPAN_FA_D; c++) dot += qr[c] * Ks[j * SPAN_FA_D + c];
      sc[j] = dot * scale + Ms[j];
      mt = fmaxf(mt, sc[j]);
    }
    const bool none = mt == __int_as_float(0xff800000);  // every key so far is −∞: P = 0, nothing to rescale
    const float corr = none ? 1.0f : expf(m - mt);       // 0 after tiles of −∞ only (m = −∞), never exp(−∞ + ∞)
    l *= corr;
    for (int c = 0; c < SPAN_FA_D; c++) o[c] *= corr;
    for (int j = 0; j < cnt; j++) {
      const float p = none ? 0.0f : expf(sc[j] - mt);
      l += p;
      const float pz = keep >= 1.0f ? p : (float)(fa_splitmix(base + first + s0 + j) >> 40) * (1.0f / 16777216.0f) < keep ? p * invKeep : 0.0f;
      if (pz != 0.0f)
        for (int c = 0; c < SPAN_FA_D; c++) o[c] += pz * Vs[j * SPAN_FA_D + c];
    }
    m = mt;
  }
  if (!row) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;  // a row whose every key is −∞: ctx 0, lse −∞
  float* cp = ctx + (b * T + t) * H + h * SPAN_FA_D;
  for (int c = 0; c < SPAN_FA_D; c++) cp[c] = o[c] * inv;
  lse[(b * A + h) * T + t] = l > 0.0f ? m + logf(l) : m;
}
