// SpanResidualLayerNorm on the cuda backend, fp32 (issue 21 item 3): BertSelfOutput / BertOutput
// after their GEMM, y = LayerNorm(dropout(z + bias) + residual), in one kernel, and its backward in
// two. It equals the chain the native backend runs for the same op (src/core/engine/fused-composite.ts
// residualLayerNorm: native/src/fused.cc linear_forward's bias, native/src/ops.cc dropout, tfjs' add,
// native/src/fused.cc layer_norm_forward), and replaces bias_gelu.cu span_bias_add_f32, dropout.cu,
// the census add and layernorm.cu's forward (four launches), and in the backward layernorm.cu's two
// kernels, dropout.cu and linear_backward.cu span_bias_grad_f32 (four launches, two of them a
// thread per column over every row).
// One source, no headers: NVRTC compiles it on a GPU, the stand-in NVRTC on the CPU.
//
// CPU reference, per row r of z [rows, H] (the GEMM's x·Wᵀ without bias), bias, g, beta [H]:
//   v = z[r,j] + bias[j];  d = keep < 1 ? (kept(i) ? v·(1/keep) : 0) : v   (i = r·H + j)
//   s[r,j] = d + residual[r,j]                     (saved: the LayerNorm input)
//   m = Σ_j s / H;  var = Σ_j (s − m)² / H;  rs = 1/√(var + ε)   (mean, rstd [rows] saved)
//   y[r,j] = (s[r,j] − m)·rs·g[j] + beta[j]
// kept(i) is dropout.cu's mask (native/src/mathfn.h dropout_keeps): base = SplitMix64(seed),
//   kept iff (float)(SplitMix64(base + i) >> 40)·2⁻²⁴ < keep; nothing of the mask is stored.
// Backward from dy, s, g, mean, rstd (x̂ = (s − m)·rs, u = dy·g):
//   ds[r,j] = rs·(u − mean_j(u) − x̂·mean_j(u·x̂))   (= dresidual)
//   dz[r,j] = keep < 1 ? (kept(i) ? ds·(1/keep) : 0) : ds   (the mask regenerated)
//   dg[j] = Σ_r dy·x̂;  dbeta[j] = Σ_r dy;  dbias[j] = Σ_r dz
// Column sums: float over runs of 32 rows, then in double (as native's col_sum): the backward row
// kernel writes each chunk's float sums, span_residual_layernorm_params_f32 adds the chunks.
//
// Launch: the row kernels take a block of whole warps (blockDim.x a multiple of 32, ≤ 1024), any
// grid ≥ 1: the forward one row per block (grid-stride over rows), the backward one chunk of 32
// rows per block (grid-stride over chunks); every sum is a fixed tree or in row order, so the bits
// do not depend on the schedule. The parameter kernel takes one thread per column (any grid and
// block). No atomics. s may be z (in place: each thread reads its own elements before writing them).

static __device__ __forceinline__ unsigned long long rln_splitmix(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// dropout of v at flat index i (identity for keep ≥ 1), as dropout.cu.
static __device__ __forceinline__ float rln_drop(float v, unsigned long long base, long long i, float keep) {
  if (keep >= 1.0f) return v;
  const bool kept = (float)(rln_splitmix(base + (unsigned long long)i) >> 40) * (1.0f / 16777216.0f) < keep;
  return kept ? v * (1.0f / keep) : 0.0f;
}

// Repeated on purpose in layernorm.cu (ln_block_sum): each .cu is compiled alone by NVRTC, with no header of span's to share.
// Sum of v over the block, returned to every thread. red: 32 floats of shared memory.
static __device__ float rln_block_sum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();  // red may still be read by the previous call's second stage
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < warps ? red[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// z, residual, s, y [rows, H] (s may be z); bias, g, beta [H]; mean, rstd [rows].
extern "C" __global__ void span_residual_layernorm_forward_f32(const float* z, const float* __restrict__ bias, const float* __restrict__ residual,
                                                               const float* __restrict__ g, const float* __restrict__ beta, float* s,
                                                               float* __restrict__ y, float* __restrict__ mean, float* __restrict__ rstd,
                                                               long long rows, int H, float eps, float keep, const unsigned long long* __restrict__ seedp) {
  __shared__ float red[32];
  const unsigned long long base = rln_splitmix(*seedp);
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    float* sr = s + r * H;
    float sum = 0.0f;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
      const float v = rln_drop(z[r * H + j] + bias[j], base, r * H + j, keep) + residual[r * H + j];
      sr[j] = v;  // read back below by this thread only
      sum += v;
    }
    const float m = rln_block_sum(sum, red) / H;
    float var = 0.0f;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
      const float d = sr[j] - m;
      var += d * d;
    }
    const float rs = 1.0f / sqrtf(rln_block_sum(var, red) / H + eps);
    for (int j = threadIdx.x; j < H; j += blockDim.x) y[r * H + j] = (sr[j] - m) * rs * g[j] + beta[j];
    if (threadIdx.x == 0) mean[r] = m, rstd[r] = rs;
  }
}

// dy, s, ds, dz [rows, H]; g [H]; mean, rstd [rows] from the forward pass. ds = dresidual, dz = d(z + bias).
// Block b takes the chunks k = b, b + gridDim.x, … of 32 rows (fewer in the last), rows in order, and
// writes partials [ceil(rows/32), 3, H]: the float sums over the chunk of dy·x̂, dy and dz per column
// (each column's partials touched by one thread of the block only).
extern "C" __global__ void span_residual_layernorm_backward_f32(const float* __restrict__ dy, const float* __restrict__ s, const float* __restrict__ g,
                                                                const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ ds,
                                                                float* __restrict__ dz, float* __restrict__ partials, long long rows, int H, float keep,
                                                                const unsigned long long* __restrict__ seedp) {
  __shared__ float red[32];
  const unsigned long long base = rln_splitmix(*seedp);
  const long long chunks = (rows + 31) / 32;
  for (long long k = blockIdx.x; k < chunks; k += gridDim.x) {
    float* pk = partials + k * 3 * H;
    const long long r1 = 32 * k + 32 < rows ? 32 * k + 32 : rows;
    for (long long r = 32 * k; r < r1; r++) {
      const float *sr = s + r * H, *dr = dy + r * H;
      const float m = mean[r], rs = rstd[r];
      float s1 = 0.0f, s2 = 0.0f;
      for (int j = threadIdx.x; j < H; j += blockDim.x) {
        const float u = dr[j] * g[j];
        s1 += u;
        s2 += u * ((sr[j] - m) * rs);
      }
      const float m1 = rln_block_sum(s1, red) / H;
      const float m2 = rln_block_sum(s2, red) / H;
      for (int j = threadIdx.x; j < H; j += blockDim.x) {
        const float u = dr[j] * g[j], xh = (sr[j] - m) * rs;
        const float d = rs * (u - m1 - xh * m2);
        const float dd = rln_drop(d, base, r * H + j, keep);
        ds[r * H + j] = d;
        dz[r * H + j] = dd;
        const bool first = r == 32 * k;
        pk[j] = (first ? 0.0f : pk[j]) + dr[j] * xh;
        pk[H + j] = (first ? 0.0f : pk[H + j]) + dr[j];
        pk[2 * H + j] = (first ? 0.0f : pk[2 * H + j]) + dd;
      }
    }
  }
}

// dg, dbeta, dbias [H] = Σ_k partials[k, 0..2, ·] in double, k in order. One thread per column (any
// grid and block); chunks = 0 writes zeros.
extern "C" __global__ void span_residual_layernorm_params_f32(const float* __restrict__ partials, float* __restrict__ dg, float* __restrict__ dbeta,
                                                              float* __restrict__ dbias, long long chunks, int H) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < H; j += gridDim.x * blockDim.x) {
    double sg = 0.0, sb = 0.0, sz = 0.0;
    for (long long k = 0; k < chunks; k++) {
      const float* pk = partials + k * 3 * H;
      sg += pk[j], sb += pk[H + j], sz += pk[2 * H + j];
    }
    dg[j] = (float)sg, dbeta[j] = (float)sb, dbias[j] = (float)sz;
  }
}
