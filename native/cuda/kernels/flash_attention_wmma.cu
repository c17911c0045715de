// SpanAttention(Grad) on the cuda backend at --precision bf16 (fp16, tf32), on tensor cores (issue 21 item 2):
// the same computation as flash_attention_forward.cu and flash_attention_backward.cu (their
// header comments hold the CPU reference; FlashAttention-2, Dao 2023, Algorithms 1 and 2), with
// the matrix products Q·Kᵀ, P·V (forward) and Q·Kᵀ, dO·Vᵀ, dS·K, dSᵀ·Q, (P∘z)ᵀ·dO (backward)
// done by nvcuda::wmma m16n16k16 on bf16 operands with fp32 accumulation, as the simple path's
// bf16 GEMMs round them: q, k, v, dctx are rounded to bf16 (round to nearest even) when staged
// into shared memory, and so are the probabilities after dropout (P∘z) and dS. The online
// softmax, its running max m and sum l, lse, D = Σ_c dctx·ctx and dS are fp32, as is every output.
//
// The fragment layout is opaque (mma.h): a kernel never reads a fragment's x[] by position. Scores
// go from accumulator fragments to shared memory (store_matrix_sync), the softmax runs there on
// plain floats, and P comes back as a matrix_a fragment (load_matrix_sync); the output
// accumulator O of the forward pass lives in shared memory (rescaled there by exp(m_old − m_new),
// then loaded as the accumulator of O += P·V), the backward's dQ, dK, dV in fragments for the
// whole loop. A warp owns 16 query rows (forward, dq) or 16 key rows (dk, dv); inside a warp two
// lanes share a row (a half of its 32 columns each, sums and maxima across the pair by shuffles).
//
// Masked keys: a score of −∞ (a key past T, or a mask of −∞) gives P = 0 even when every key seen
// so far is −∞ (the rescaling factor is then 1, not exp(−∞ + ∞) = NaN); a row whose every key is
// −∞ gives ctx = 0 and lse = −∞, and P = 0 in the backward pass.
// Dropout: the same (seed, flat index into [B, A, T, T]) bits as flash_attention_forward.cu.
//
// Variants by define: none = bf16; SPAN_FA_F16 = fp16 (--precision fp16, issue 35: m16n16k16 on
// __half operands rounded by __float2half_rn, fp32 accumulation; the same layout and shared memory
// as bf16, which has the same 2-byte elements: the variant for compute capability 7.x, whose
// tensor cores have no bf16); SPAN_FA_TF32 = tf32 (below).
//
// check-variants: default@80 SPAN_FA_TF32@80 SPAN_FA_F16@70
// (tools/check-cuda-kernels.sh: bf16 and tf32 wmma need sm_80, fp16 wmma sm_70)
// Compile-time: SPAN_FA_D = d, a multiple of 16 up to 128. A tile is 32 rows (2 warps, 64 threads)
// and 32 keys (or queries). Launch (all three kernels): grid (⌈T/32⌉, A, B), block (64, 1, 1);
// static shared memory ≤ 47 KiB (d = 128). Deterministic (fixed order, no atomics).
#ifdef SPAN_FA_F16
#include <cuda_fp16.h>
#else
#include <cuda_bf16.h>
#endif
#include <mma.h>

#ifndef SPAN_FA_D
#define SPAN_FA_D 64
#endif
#define FW_T 32          // rows (queries or keys) per block = keys (queries) per tile
#define FW_THREADS 64    // 2 warps, 16 rows each
#define FW_DB (SPAN_FA_D / 16)

using namespace nvcuda;
#ifdef SPAN_FA_TF32  // --precision tf32: m16n16k8 on tf32 operands (fp32 storage, rounded by __float_to_tf32)
#define FW_K 8
typedef float FwE;
typedef wmma::precision::tf32 FwT;
static __device__ __forceinline__ FwE fw_round(float x) { return wmma::__float_to_tf32(x); }
#elif defined(SPAN_FA_F16)  // --precision fp16: m16n16k16 on half operands (2 bytes, as bf16)
#define FW_K 16
typedef __half FwE;
typedef __half FwT;
static __device__ __forceinline__ FwE fw_round(float x) { return __float2half_rn(x); }
#else
#define FW_K 16
typedef __nv_bfloat16 FwE;
typedef __nv_bfloat16 FwT;
static __device__ __forceinline__ FwE fw_round(float x) { return __float2bfloat16(x); }
#endif
typedef wmma::fragment<wmma::matrix_a, 16, 16, FW_K, FwT, wmma::row_major> FwA;
typedef wmma::fragment<wmma::matrix_b, 16, 16, FW_K, FwT, wmma::row_major> FwBRow;
typedef wmma::fragment<wmma::matrix_b, 16, 16, FW_K, FwT, wmma::col_major> FwBCol;
typedef wmma::fragment<wmma::accumulator, 16, 16, FW_K, float> FwC;

static __device__ __forceinline__ unsigned long long fw_splitmix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// z[i]: 1/keep if element i of [B, A, T, T] is kept, else 0 (1 when keep ≥ 1): dropout.cu's bits.
static __device__ __forceinline__ float fw_keep(unsigned long long base, unsigned long long i, float keep) {
  if (keep >= 1.0f) return 1.0f;
  return (float)(fw_splitmix(base + i) >> 40) * (1.0f / 16777216.0f) < keep ? 1.0f / keep : 0.0f;
}

static __device__ __forceinline__ float fw_ninf() { return __int_as_float(0xff800000); }

// Rows r0 … r0+31 of head h of x [B, T, H] (H = A·d) into dst [32, d] as bf16; rows ≥ T are 0.
static __device__ __forceinline__ void fw_stage(FwE* dst, const float* __restrict__ x, long long b, int r0, int T, long long H, int h) {
  for (int i = threadIdx.x; i < FW_T * SPAN_FA_D; i += FW_THREADS) {
    const int r = r0 + i / SPAN_FA_D;
    dst[i] = fw_round(r < T ? x[(b * T + r) * H + (long long)h * SPAN_FA_D + i % SPAN_FA_D] : 0.0f);
  }
}

// out [16, 32] (row-major, ld 32) = a [16, d] · bᵀ where b is [32, d] row-major (a key or query tile).
static __device__ __forceinline__ void fw_abT(float* out, const FwE* a, const FwE* b) {
  for (int j = 0; j < 2; j++) {
    FwC acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int kk = 0; kk < SPAN_FA_D / FW_K; kk++) {
      FwA fa;
      FwBCol fb;
      wmma::load_matrix_sync(fa, a + kk * FW_K, SPAN_FA_D);
      wmma::load_matrix_sync(fb, b + j * 16 * SPAN_FA_D + kk * FW_K, SPAN_FA_D);  // (k, n) at b[n·d + k]
      wmma::mma_sync(acc, fa, fb, acc);
    }
    wmma::store_matrix_sync(out + j * 16, acc, FW_T, wmma::mem_row_major);
  }
}

// acc[cb] += p [16, 32] (bf16, ld 32) · x [32, d] (bf16 row-major) for column block cb.
static __device__ __forceinline__ void fw_pv(FwC& acc, const FwE* p, const FwE* x, int cb) {
  for (int kk = 0; kk < FW_T / FW_K; kk++) {
    FwA fa;
    FwBRow fb;
    wmma::load_matrix_sync(fa, p + kk * FW_K, FW_T);
    wmma::load_matrix_sync(fb, x + kk * FW_K * SPAN_FA_D + cb * 16, SPAN_FA_D);
    wmma::mma_sync(acc, fa, fb, acc);
  }
}

// Lane pair's share of the online softmax for one key tile (forward): row r of the warp's scores,
// 16 of its 32 columns; updates m, l; writes P∘z as bf16; returns the factor O is rescaled by.
static __device__ __forceinline__ float fw_softmax(const float* S, const float* Ms, FwE* P, float scale, float& m, float& l,
                                                   unsigned long long base, unsigned long long first, float keep) {
  const int c0 = (threadIdx.x & 1) * 16;
  float u[16], mt = m;
  for (int c = 0; c < 16; c++) u[c] = S[c0 + c] * scale + Ms[c0 + c], mt = fmaxf(mt, u[c]);
  mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, 1));
  const bool none = mt == fw_ninf();  // every key so far is −∞
  const float corr = none ? 1.0f : expf(m - mt);
  float sum = 0.0f;
  for (int c = 0; c < 16; c++) {
    const float p = none ? 0.0f : expf(u[c] - mt);
    sum += p;
    P[c0 + c] = fw_round(p * fw_keep(base, first + c0 + c, keep));
  }
  sum += __shfl_xor_sync(0xffffffffu, sum, 1);
  l = l * corr + sum;
  m = mt;
  return corr;
}

// q, k, v, ctx [B, T, A·D]; mask [B, T] (additive); lse [B, A, T]. The arguments of span_flash_attention_forward_f32.
extern "C" __global__ void __launch_bounds__(FW_THREADS)
    span_flash_attention_forward_wmma(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                                      const float* __restrict__ mask, float* __restrict__ ctx, float* __restrict__ lse, int T, int A,
                                      float scale, float keep, const unsigned long long* __restrict__ seedp) {
  __shared__ __align__(32) FwE Qs[FW_T * SPAN_FA_D], Ks[FW_T * SPAN_FA_D], Vs[FW_T * SPAN_FA_D], Ps[FW_T * FW_T];
  __shared__ __align__(32) float Ss[FW_T * FW_T], Os[FW_T * SPAN_FA_D];
  __shared__ float Ms[FW_T];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, q0 = blockIdx.x * FW_T, w = threadIdx.x / 32, r = w * 16 + (threadIdx.x & 31) / 2, half = threadIdx.x & 1;
  const int t = q0 + r, hd = SPAN_FA_D / 2;
  const unsigned long long base = fw_splitmix(*seedp), first = ((unsigned long long)(b * A + h) * T + (t < T ? t : 0)) * T;
  float m = fw_ninf(), l = 0.0f;
  float* Orow = Os + r * SPAN_FA_D + half * hd;
  for (int c = 0; c < hd; c++) Orow[c] = 0.0f;
  fw_stage(Qs, q, b, q0, T, H, h);
  for (int s0 = 0; s0 < T; s0 += FW_T) {
    __syncthreads();  // every warp is done with the previous tile
    fw_stage(Ks, k, b, s0, T, H, h);
    fw_stage(Vs, v, b, s0, T, H, h);
    if (threadIdx.x < FW_T) Ms[threadIdx.x] = s0 + threadIdx.x < T ? mask[b * T + s0 + threadIdx.x] : fw_ninf();
    __syncthreads();
    fw_abT(Ss + w * 16 * FW_T, Qs + w * 16 * SPAN_FA_D, Ks);  // scores of the warp's 16 rows
    __syncwarp();
    const float corr = fw_softmax(Ss + r * FW_T, Ms, Ps + r * FW_T, scale, m, l, base, first + s0, keep);
    for (int c = 0; c < hd; c++) Orow[c] *= corr;
    __syncwarp();
    for (int cb = 0; cb < FW_DB; cb++) {  // O += (P∘z)·V, O through an accumulator fragment
      FwC acc;
      float* o = Os + w * 16 * SPAN_FA_D + cb * 16;
      wmma::load_matrix_sync(acc, o, SPAN_FA_D, wmma::mem_row_major);
      fw_pv(acc, Ps + w * 16 * FW_T, Vs, cb);
      wmma::store_matrix_sync(o, acc, SPAN_FA_D, wmma::mem_row_major);
    }
    __syncwarp();
  }
  if (t >= T) return;
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  float* cp = ctx + (b * T + t) * H + (long long)h * SPAN_FA_D + half * hd;
  for (int c = 0; c < hd; c++) cp[c] = Orow[c] * inv;
  if (!half) lse[(b * A + h) * T + t] = l > 0.0f ? m + logf(l) : fw_ninf();
}

// The backward pass's scores for one tile: u = S·scale + mask; P = exp(u − L) (0 where u or L is −∞);
// dS = P·(dP·z − D)·scale as bf16 into G and, when Pz is given, P∘z as bf16 (the lane pair's 16 columns).
static __device__ __forceinline__ void fw_grad_scores(const float* S, const float* dP, FwE* G, FwE* Pz, float scale, float keep,
                                                      unsigned long long base, const float* mk, float m1, const float* Lk, float L1,
                                                      const float* Dk, float D1, unsigned long long i0, long long di) {
  const int c0 = (threadIdx.x & 1) * 16;
  for (int c = c0; c < c0 + 16; c++) {
    const float L = Lk ? Lk[c] : L1, u = S[c] * scale + (mk ? mk[c] : m1);
    const float P = u == fw_ninf() || L == fw_ninf() ? 0.0f : expf(u - L);
    const float z = fw_keep(base, i0 + c * di, keep);
    G[c] = fw_round(P * (dP[c] * z - (Dk ? Dk[c] : D1)) * scale);  // after S[c] and dP[c] are read: G may be dP, Pz may be S
    if (Pz) Pz[c] = fw_round(P * z);
  }
}

// Σ_c dctx·ctx of row t (fp32), split over the lane pair.
static __device__ __forceinline__ float fw_rowdot(const float* __restrict__ dctx, const float* __restrict__ ctx, long long off) {
  const int hd = SPAN_FA_D / 2, c0 = (threadIdx.x & 1) * hd;
  float s = 0.0f;
  for (int c = c0; c < c0 + hd; c++) s += dctx[off + c] * ctx[off + c];
  return s + __shfl_xor_sync(0xffffffffu, s, 1);
}

// Rows of the warp's 16 × d accumulators (fragments acc[FW_DB]) into out [B, T, H] (rows ≥ T skipped), through scratch [16, 16].
static __device__ __forceinline__ void fw_store_rows(float* __restrict__ out, const FwC* acc, float* scratch, long long b, int r0, int T, long long H, int h) {
  for (int cb = 0; cb < FW_DB; cb++) {
    wmma::store_matrix_sync(scratch, acc[cb], 16, wmma::mem_row_major);
    __syncwarp();
    const int lane = threadIdx.x & 31, rr = lane / 2, c0 = (lane & 1) * 8;
    if (r0 + rr < T)
      for (int c = c0; c < c0 + 8; c++) out[(b * T + r0 + rr) * H + (long long)h * SPAN_FA_D + cb * 16 + c] = scratch[rr * 16 + c];
    __syncwarp();
  }
}

// dq [B, T, A·D] from dctx, q, k, v, ctx [B, T, A·D], mask [B, T], lse [B, A, T]: the arguments of span_flash_attention_backward_dq_f32.
extern "C" __global__ void __launch_bounds__(FW_THREADS)
    span_flash_attention_backward_dq_wmma(const float* __restrict__ dctx, const float* __restrict__ q, const float* __restrict__ k,
                                          const float* __restrict__ v, const float* __restrict__ ctx, const float* __restrict__ mask,
                                          const float* __restrict__ lse, float* __restrict__ dq, int T, int A, float scale, float keep,
                                          const unsigned long long* __restrict__ seedp) {
  __shared__ __align__(32) FwE Qs[FW_T * SPAN_FA_D], Os[FW_T * SPAN_FA_D], Ks[FW_T * SPAN_FA_D], Vs[FW_T * SPAN_FA_D], Gs[FW_T * FW_T];
  __shared__ __align__(32) float Ss[FW_T * FW_T], Ps[FW_T * FW_T];
  __shared__ float Ms[FW_T];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, q0 = blockIdx.x * FW_T, w = threadIdx.x / 32, r = w * 16 + (threadIdx.x & 31) / 2, t = q0 + r;
  const unsigned long long base = fw_splitmix(*seedp), first = ((unsigned long long)(b * A + h) * T + (t < T ? t : 0)) * T;
  const float L = t < T ? lse[(b * A + h) * T + t] : fw_ninf(), Dt = fw_rowdot(dctx, ctx, (b * T + (t < T ? t : 0)) * H + (long long)h * SPAN_FA_D);
  FwC acc[FW_DB];
  for (int cb = 0; cb < FW_DB; cb++) wmma::fill_fragment(acc[cb], 0.0f);
  fw_stage(Qs, q, b, q0, T, H, h);
  fw_stage(Os, dctx, b, q0, T, H, h);
  for (int s0 = 0; s0 < T; s0 += FW_T) {
    __syncthreads();  // every warp is done with the previous tile
    fw_stage(Ks, k, b, s0, T, H, h);
    fw_stage(Vs, v, b, s0, T, H, h);
    if (threadIdx.x < FW_T) Ms[threadIdx.x] = s0 + threadIdx.x < T ? mask[b * T + s0 + threadIdx.x] : fw_ninf();
    __syncthreads();
    fw_abT(Ss + w * 16 * FW_T, Qs + w * 16 * SPAN_FA_D, Ks);  // S = Q·Kᵀ
    fw_abT(Ps + w * 16 * FW_T, Os + w * 16 * SPAN_FA_D, Vs);  // dP = dO·Vᵀ
    __syncwarp();
    fw_grad_scores(Ss + r * FW_T, Ps + r * FW_T, Gs + r * FW_T, nullptr, scale, keep, base, Ms, 0.0f, nullptr, L, nullptr, Dt, first + s0, 1);
    __syncwarp();
    for (int cb = 0; cb < FW_DB; cb++) fw_pv(acc[cb], Gs + w * 16 * FW_T, Ks, cb);  // dQ += dS·K
  }
  fw_store_rows(dq, acc, Ss + w * 16 * FW_T, b, q0 + w * 16, T, H, h);
}

// dk, dv [B, T, A·D] from the same inputs: a warp owns 16 keys, the queries come in tiles of 32.
extern "C" __global__ void __launch_bounds__(FW_THREADS)
    span_flash_attention_backward_dkdv_wmma(const float* __restrict__ dctx, const float* __restrict__ q, const float* __restrict__ k,
                                            const float* __restrict__ v, const float* __restrict__ ctx, const float* __restrict__ mask,
                                            const float* __restrict__ lse, float* __restrict__ dk, float* __restrict__ dv, int T, int A,
                                            float scale, float keep, const unsigned long long* __restrict__ seedp) {
  __shared__ __align__(32) FwE Ks[FW_T * SPAN_FA_D], Vs[FW_T * SPAN_FA_D], Qs[FW_T * SPAN_FA_D], Os[FW_T * SPAN_FA_D];
  __shared__ __align__(32) float Ss[FW_T * FW_T], Ps[FW_T * FW_T];
#ifdef SPAN_FA_TF32
  FwE* const Gs = Ps;  // fp32 elements: dS over dP and P∘z over S, in place (each lane rewrites what it read), to stay under 48 KiB
  FwE* const Zs = Ss;
#else
  __shared__ __align__(32) FwE Gs[FW_T * FW_T], Zs[FW_T * FW_T];
#endif
  __shared__ float Ls[FW_T], Ds[FW_T];
  const long long b = blockIdx.z, H = (long long)A * SPAN_FA_D;
  const int h = blockIdx.y, k0 = blockIdx.x * FW_T, w = threadIdx.x / 32, r = w * 16 + (threadIdx.x & 31) / 2, s = k0 + r;
  const unsigned long long base = fw_splitmix(*seedp), head = (unsigned long long)(b * A + h) * T;
  const float ms = s < T ? mask[b * T + s] : fw_ninf();
  FwC gk[FW_DB], gv[FW_DB];
  for (int cb = 0; cb < FW_DB; cb++) wmma::fill_fragment(gk[cb], 0.0f), wmma::fill_fragment(gv[cb], 0.0f);
  fw_stage(Ks, k, b, k0, T, H, h);
  fw_stage(Vs, v, b, k0, T, H, h);
  for (int t0 = 0; t0 < T; t0 += FW_T) {
    __syncthreads();  // every warp is done with the previous tile
    fw_stage(Qs, q, b, t0, T, H, h);
    fw_stage(Os, dctx, b, t0, T, H, h);
    const int i = threadIdx.x / 2, tq = t0 + i;  // lane pairs: D and L of query t0 + i
    const float Di = fw_rowdot(dctx, ctx, (b * T + (tq < T ? tq : 0)) * H + (long long)h * SPAN_FA_D);
    if (!(threadIdx.x & 1)) Ds[i] = Di, Ls[i] = tq < T ? lse[head + tq] : fw_ninf();
    __syncthreads();
    fw_abT(Ss + w * 16 * FW_T, Ks + w * 16 * SPAN_FA_D, Qs);  // Sᵀ = K·Qᵀ
    fw_abT(Ps + w * 16 * FW_T, Vs + w * 16 * SPAN_FA_D, Os);  // dPᵀ = V·dOᵀ
    __syncwarp();
    fw_grad_scores(Ss + r * FW_T, Ps + r * FW_T, Gs + r * FW_T, Zs + r * FW_T, scale, keep, base, nullptr, ms, Ls, 0.0f, Ds, 0.0f,
                   (head + t0) * T + (s < T ? s : 0), T);
    __syncwarp();
    for (int cb = 0; cb < FW_DB; cb++) fw_pv(gv[cb], Zs + w * 16 * FW_T, Os, cb), fw_pv(gk[cb], Gs + w * 16 * FW_T, Qs, cb);  // dV += (P∘z)ᵀ·dO, dK += dSᵀ·Q
  }
  fw_store_rows(dk, gk, Ss + w * 16 * FW_T, b, k0 + w * 16, T, H, h);
  fw_store_rows(dv, gv, Ss + w * 16 * FW_T, b, k0 + w * 16, T, H, h);
}
