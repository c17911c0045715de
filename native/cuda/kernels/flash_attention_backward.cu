// SpanAttentionGrad on the cuda backend, fused (issue 21 item 2): the backward pass of
// flash_attention_forward.cu, recomputing the probabilities from q, k, the mask and the saved row
// log-sum-exp, and the dropout mask from the same (seed, index) bits, so that no [B, A, T, T]
// tensor exists (FlashAttention-2, Dao 2023, §3.2 / Algorithm 2, with D = rowsum(dO ∘ O)). Two
// kernels, so that neither needs atomics: dq (a thread per query row, key tiles in shared memory)
// and dk, dv (a thread per key row, query tiles in shared memory). Equals native/src/fused.cc
// attention_backward and fused-composite.ts attentionGrad.
//
// CPU reference, per b, h, with u, P, z, lse as in flash_attention_forward.cu and dO = dctx:
//   D[t]    = Σ_c dO[t,c]·ctx[t,c]      (= Σ_s dP[t,s]·P[t,s] of the simple path, dropout included)
//   dP[t,s] = (Σ_c dO[t,c]·v[s,c])·z[t,s]
//   dS[t,s] = P[t,s]·(dP[t,s] − D[t])·scale
//   dq[t,c] = Σ_s dS[t,s]·k[s,c];  dk[s,c] = Σ_t dS[t,s]·q[t,c];  dv[s,c] = Σ_t P[t,s]·z[t,s]·dO[t,c]
// The score u is computed in the same order as the forward kernel (Σ_c over c ascending, then
// ·scale + mask), so P here is exp of the same float u minus the saved lse.
//
// Plain fp32 FMA, no tensor cores. SPAN_FA_D, SPAN_FA_N as in the forward file; both kernels:
// grid (⌈T/N⌉, A, B), block (N, 1, 1), a thread per row. So that the per-thread arrays fit in
// registers (ptxas for sm_90 spilled 684 bytes per thread of dk, dv at d = 64 when k, v and both
// sums were registers), the rows only dot products read (dctx's for dq; k's and v's for dk, dv) are
// in shared memory, padded to d + 1 floats (no bank conflicts), and the tiles of the other side are
// N/2 keys (dq) or N/4 queries (dk, dv): shared memory (2·(N/2)·D + N·(D+1) + N/2)·4 and
// (2·N·(D+1) + 2·(N/4)·D + N/2)·4 bytes (≤ 42 KiB for N = 64, D = 64 and N = 32, D = 128).
// The sums run in the same order as before, so the results are the same bits. Deterministic.

#ifndef SPAN_FA_D
#define SPAN_FA_D 64
#endif
#ifndef SPAN_FA_N
#define SPAN_FA_N 64
#endif
#define FAB_P (SPAN_FA_D + 1)     // row stride of the per-thread rows in shared memory: thread i's row starts in bank i·(d+1) mod 32
#define FAB_NK (SPAN_FA_N / 2)    // keys per tile of the dq kernel
#define FAB_NQ (SPAN_FA_N / 4)    // queries per tile of the dk, dv kernel

static __device__ __forceinline__ unsigned long long fab_splitmix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// z[i] of the forward pass: 1/keep if element i of [B, A, T, T] is kept, else 0 (1 when keep ≥ 1).
static __device__ __forceinline__ float fab_keep(unsigned long long base, unsigned long long i, float keep, float invKeep) {
  if (keep >= 1.0f) return 1.0f;
  return (float)(fab_splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep ? invKeep : 0.0f;
}

static __device__ __forceinline__ float fab_dot(const float* a, const float* b) {
  float s = 0.0f;
  for (int c = 0; c < SPAN_FA_D; c++) s += a[c] * b[c];
  return s;
}

// dq [B, T, A·D] from dctx, q, k, v, ctx [B, T, A·D], mask [B, T], lse [B, A, T].
extern "C" __global__ void __launch_bounds__(SPAN_FA_N)
    span_flash_attention_backward_dq_f32(const float* __restrict__ dctx, const float* __restrict__ q, const float* __restrict__ k,
                                         const float* __restrict__ v, const float* __restrict__ ctx, const float* __restrict__ mask,
                                         const float* __restrict__ lse, float* __restrict__ dq, int T, int A, float scale, float keep,
                                         const unsigned long long* __restrict__ seedp) {
  __shared__ float Ks[FAB_NK * SPAN_FA_D], Vs[FAB_NK * SPAN_FA_D], Ms[FAB_NK], Dr[SPAN_FA_N * FAB_P];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, t = blockIdx.x * SPAN_FA_N + threadIdx.x;
  const bool row = t < T;
  const long long off = (b * T + (row ? t : 0)) * H + h * SPAN_FA_D;
  const unsigned long long base = fab_splitmix(*seedp), first = ((unsigned long long)(b * A + h) * T + (row ? t : 0)) * T;
  const float invKeep = 1.0f / keep, L = row ? lse[(b * A + h) * T + t] : 0.0f;
  float* dor = Dr + threadIdx.x * FAB_P;  // this thread's row of dctx (shared: registers hold q and the sums)
  float qr[SPAN_FA_D], acc[SPAN_FA_D];
  for (int c = 0; c < SPAN_FA_D; c++) qr[c] = q[off + c], dor[c] = dctx[off + c], acc[c] = 0.0f;
  const float D = fab_dot(dor, ctx + off);
  for (int s0 = 0; s0 < T; s0 += FAB_NK) {
    const int cnt = min(FAB_NK, T - s0);
    // Repeated on purpose in flash_attention_forward.cu (the K, V and mask tile load): each .cu is compiled alone by NVRTC, with no header of span's to share.
    __syncthreads();  // every thread is done with the previous tile
    for (int i = threadIdx.x; i < cnt * SPAN_FA_D; i += SPAN_FA_N) {
      const long long g = (b * T + s0 + i / SPAN_FA_D) * H + h * SPAN_FA_D + i % SPAN_FA_D;
      Ks[i] = k[g], Vs[i] = v[g];
    }
    if (threadIdx.x < cnt) Ms[threadIdx.x] = mask[b * T + s0 + threadIdx.x];
    __syncthreads();
    if (!row) continue;
    for (int j = 0; j < cnt; j++) {
      const float* kj = Ks + j * SPAN_FA_D;
      const float P = L == __int_as_float(0xff800000) ? 0.0f : expf(fab_dot(qr, kj) * scale + Ms[j] - L);  // a row of −∞ only: P = 0
      const float dS = P * (fab_dot(dor, Vs + j * SPAN_FA_D) * fab_keep(base, first + s0 + j, keep, invKeep) - D) * scale;
      for (int c = 0; c < SPAN_FA_D; c++) acc[c] += dS * kj[c];
    }
  }
  if (!row) return;
  for (int c = 0; c < SPAN_FA_D; c++) dq[off + c] = acc[c];
}

// dk, dv [B, T, A·D] from the same inputs.
extern "C" __global__ void __launch_bounds__(SPAN_FA_N)
    span_flash_attention_backward_dkdv_f32(const float* __restrict__ dctx, const float* __restrict__ q, const float* __restrict__ k,
                                           const float* __restrict__ v, const float* __restrict__ ctx, const float* __restrict__ mask,
                                           const float* __restrict__ lse, float* __restrict__ dk, float* __restrict__ dv, int T, int A,
                                           float scale, float keep, const unsigned long long* __restrict__ seedp) {
  __shared__ float Kr[SPAN_FA_N * FAB_P], Vr[SPAN_FA_N * FAB_P], Qs[FAB_NQ * SPAN_FA_D], Os[FAB_NQ * SPAN_FA_D], Ls[FAB_NQ], Ds[FAB_NQ];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, s = blockIdx.x * SPAN_FA_N + threadIdx.x;
  const bool row = s < T;
  const long long off = (b * T + (row ? s : 0)) * H + h * SPAN_FA_D;
  const unsigned long long base = fab_splitmix(*seedp), head = (unsigned long long)(b * A + h) * T;
  const float invKeep = 1.0f / keep, ms = mask[b * T + (row ? s : 0)];
  float* kr = Kr + threadIdx.x * FAB_P;  // this thread's rows of k and v (shared: registers hold the two sums)
  float* vr = Vr + threadIdx.x * FAB_P;
  float gk[SPAN_FA_D], gv[SPAN_FA_D];
  for (int c = 0; c < SPAN_FA_D; c++) kr[c] = k[off + c], vr[c] = v[off + c], gk[c] = 0.0f, gv[c] = 0.0f;
  for (int t0 = 0; t0 < T; t0 += FAB_NQ) {
    const int cnt = min(FAB_NQ, T - t0);
    __syncthreads();  // every thread is done with the previous tile
    for (int i = threadIdx.x; i < cnt * SPAN_FA_D; i += SPAN_FA_N) {
      const long long g = (b * T + t0 + i / SPAN_FA_D) * H + h * SPAN_FA_D + i % SPAN_FA_D;
      Qs[i] = q[g], Os[i] = dctx[g];
    }
    if (threadIdx.x < cnt) {
      const long long g = (b * T + t0 + threadIdx.x) * H + h * SPAN_FA_D;
      Ls[threadIdx.x] = lse[head + t0 + threadIdx.x];
      Ds[threadIdx.x] = fab_dot(dctx + g, ctx + g);  // D of query row t0 + threadIdx.x, as the dq kernel's
    }
    __syncthreads();
    if (!row) continue;
    for (int i = 0; i < cnt; i++) {
      const float* qi = Qs + i * SPAN_FA_D;
      const float* doi = Os + i * SPAN_FA_D;
      const float P = Ls[i] == __int_as_float(0xff800000) ? 0.0f : expf(fab_dot(qi, kr) * scale + ms - Ls[i]);
      const float z = fab_keep(base, (head + t0 + i) * T + s, keep, invKeep);
      const float dS = P * (fab_dot(doi, vr) * z - Ds[i]) * scale;
      const float pz = P * z;
      for (int c = 0; c < SPAN_FA_D; c++) gv[c] += pz * doi[c], gk[c] += dS * qi[c];
    }
  }
  if (!row) return;
  for (int c = 0; c < SPAN_FA_D; c++) dk[off + c] = gk[c], dv[off + c] = gv[c];
}
