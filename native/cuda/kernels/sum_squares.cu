// SpanSumSquares on the cuda backend (the squared global gradient norm), and the clipping factor
// of torch.nn.utils.clip_grad_norm_ computed on the device, so AdamW reads it without a host sync.
// Semantics of native/src/fused.cc sum_squares (Σ x² over several arrays, in double) and
// src/core/train/optim.ts clipByGlobalNorm (factor = maxNorm/(‖g‖ + 1e-6) when below 1, else 1).
// Simple: one partial launch per tensor (issue 21: all tensors in one launch).
//
// CPU reference: total = Σ_tensors Σ_i (double)x[i]²;  out = (float)total.
//
// Launch, for tensors x_0 … x_{k−1}:
//   span_sum_squares_partial_f32(x_t, n_t, partials + off_t)  grid G_t, block of any size ≤ 1024;
//       block b writes partials[off_t + b] (G_t doubles; each block's threads are added in order);
//   span_sum_partials_f32(partials, Σ G_t, out)               ONE block of any size ≤ 1024.
// The grid sizes are the caller's choice but must not depend on anything but n_t for the result
// to be reproducible; the order of every addition is fixed, so the bits are schedule-independent.
//   span_clip_factor_f32(sumsq, maxNorm, factor)              one thread.

extern "C" __global__ void span_sum_squares_partial_f32(const float* __restrict__ x, long long n, double* __restrict__ partials) {
  __shared__ double part[1024];
  double s = 0.0;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) s += (double)x[i] * x[i];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (unsigned k = 0; k < blockDim.x; k++) t += part[k];
    partials[blockIdx.x] = t;
  }
}

// Repeated on purpose in cross_entropy.cu (span_cross_entropy_total_f32) and adamw_multi.cu (the block's partial in double): each .cu is compiled alone by NVRTC, with no header of span's to share.
extern "C" __global__ void span_sum_partials_f32(const double* __restrict__ partials, long long count, float* __restrict__ out) {
  __shared__ double part[1024];
  double s = 0.0;
  for (long long i = threadIdx.x; i < count; i += blockDim.x) s += partials[i];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (unsigned k = 0; k < blockDim.x; k++) t += part[k];
    out[0] = (float)t;
  }
}

extern "C" __global__ void span_clip_factor_f32(const float* __restrict__ sumsq, float maxNorm, float* __restrict__ factor) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const double coef = maxNorm / (sqrt((double)sumsq[0]) + 1e-6);
    factor[0] = coef < 1.0 ? (float)coef : 1.0f;
  }
}
