// SpanLayerNorm and SpanLayerNormGrad on the cuda backend, fp32: BertLayerNorm over the last axis
// (ε inside the square root), as native/src/fused.cc layer_norm_forward / layer_norm_backward and
// the composite of src/core/engine/fused-composite.ts (layerNorm, layerNormGrad) compute it.
// Simple kernels (issue 20); issue 21 fuses bias + dropout + residual + LayerNorm into one.
// One source, no headers: NVRTC compiles it on a GPU, the stand-in NVRTC on the CPU.
//
// CPU reference, per row r of x [rows, H] (mean and rstd [rows] saved for the backward pass):
//   m = Σ_j x[r,j] / H;  v = Σ_j (x[r,j] − m)² / H (two passes, as tf.moments);  s = 1/√(v + ε)
//   y[r,j] = (x[r,j] − m)·s·g[j] + b[j]
// Backward, x̂ = (x − m)·s, u = dy·g:
//   dx[r,j] = s·(u[r,j] − mean_j(u[r,·]) − x̂[r,j]·mean_j(u[r,·]·x̂[r,·]))
//   dg[j] = Σ_r dy[r,j]·x̂[r,j];  db[j] = Σ_r dy[r,j]
//
// Launch: the row kernels take one block per row (grid-stride over rows, any grid ≥ 1) and a
// block of whole warps (blockDim.x a multiple of 32, ≤ 1024); every sum is a fixed tree, so the
// bits do not depend on scheduling. The parameter kernel takes one thread per column (grid-stride,
// any grid and block) and sums the rows in order: float over runs of 32 rows, then in double, as
// native's column sums do. Deterministic, no atomics; slow for few columns (issue 21).

// Repeated on purpose in residual_layernorm.cu (rln_block_sum): each .cu is compiled alone by NVRTC, with no header of span's to share.
// Sum of v over the block, returned to every thread. red: 32 floats of shared memory.
static __device__ float ln_block_sum(float v, float* red) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();  // red may still be read by the previous call's second stage
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < warps ? red[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// x, y [rows, H] (y may be x); g, b [H]; mean, rstd [rows].
extern "C" __global__ void span_layernorm_forward_f32(const float* x, const float* __restrict__ g, const float* __restrict__ b, float* y,
                                                      float* __restrict__ mean, float* __restrict__ rstd, long long rows, int H, float eps) {
  __shared__ float red[32];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* xr = x + r * H;
    float s = 0.0f;
    for (int j = threadIdx.x; j < H; j += blockDim.x) s += xr[j];
    const float m = ln_block_sum(s, red) / H;
    float v = 0.0f;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
      const float d = xr[j] - m;
      v += d * d;
    }
    const float rs = 1.0f / sqrtf(ln_block_sum(v, red) / H + eps);
    float* yr = y + r * H;
    for (int j = threadIdx.x; j < H; j += blockDim.x) yr[j] = (xr[j] - m) * rs * g[j] + b[j];
    if (threadIdx.x == 0) mean[r] = m, rstd[r] = rs;
  }
}

// dy, x, dx [rows, H]; g [H]; mean, rstd [rows] from the forward pass.
extern "C" __global__ void span_layernorm_backward_dx_f32(const float* __restrict__ dy, const float* __restrict__ x, const float* __restrict__ g,
                                                          const float* __restrict__ mean, const float* __restrict__ rstd, float* __restrict__ dx,
                                                          long long rows, int H) {
  __shared__ float red[32];
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const float *xr = x + r * H, *dr = dy + r * H;
    const float m = mean[r], rs = rstd[r];
    float s1 = 0.0f, s2 = 0.0f;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
      const float u = dr[j] * g[j];  // rounded before use, as native stores it
      s1 += u;
      s2 += u * ((xr[j] - m) * rs);
    }
    const float m1 = ln_block_sum(s1, red) / H;
    const float m2 = ln_block_sum(s2, red) / H;
    for (int j = threadIdx.x; j < H; j += blockDim.x) {
      const float u = dr[j] * g[j];
      dx[r * H + j] = rs * (u - m1 - (xr[j] - m) * rs * m2);
    }
  }
}

// dg, db [H] from dy, x [rows, H] and mean, rstd [rows]. rows = 0 writes zeros.
extern "C" __global__ void span_layernorm_backward_params_f32(const float* __restrict__ dy, const float* __restrict__ x,
                                                              const float* __restrict__ mean, const float* __restrict__ rstd,
                                                              float* __restrict__ dg, float* __restrict__ db, long long rows, int H) {
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < H; j += gridDim.x * blockDim.x) {
    double sg = 0.0, sb = 0.0;
    for (long long r0 = 0; r0 < rows; r0 += 32) {
      float pg = 0.0f, pb = 0.0f;
      const long long r1 = r0 + 32 < rows ? r0 + 32 : rows;
      for (long long r = r0; r < r1; r++) {
        const float d = dy[r * H + j];
        pg += d * ((x[r * H + j] - mean[r]) * rstd[r]);
        pb += d;
      }
      sg += pg;
      sb += pb;
    }
    dg[j] = (float)sg;
    db[j] = (float)sb;
  }
}
