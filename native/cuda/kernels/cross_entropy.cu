// SpanCrossEntropy and SpanCrossEntropyGrad on the cuda backend, fp32, with span's semantics
// (native/src/fused.cc cross_entropy_forward / _backward, src/core/engine/fused-composite.ts
// crossEntropy): the loss is the SUM over rows of −log softmax(logits[n])[labels[n]] (no mean:
// callers divide), every row counts (no ignore index: callers gather the rows they score), and a
// label outside [0, C) makes the loss NaN (native throws on the host; the device cannot without a
// sync, so the NaN reaches the loss the trainer logs). One exception, on this backend only: label
// −1 marks a padding row (pre-training pads its MLM/SBO targets to a fixed count per batch shape so
// that a step replays as one CUDA graph: docs/cuda-backend.md), whose loss and gradient are 0. Simple kernels (issue 20); issue 21 fuses
// the decoder GEMM with this so the [N, C] logits need not be kept.
//
// CPU reference, per row n of logits [N, C]:
//   lse[n] = max_j x[n,j] + log Σ_j exp(x[n,j] − max);   loss = Σ_n (lse[n] − x[n, labels[n]])
//   dlogits[n,j] = dy·exp(x[n,j] − lse[n]) − dy·[j = labels[n]]
//
// Launch: span_cross_entropy_rows_f32 one block per row (grid-stride), whole warps; then
// span_cross_entropy_total_f32 with ONE block (any size ≤ 1024) sums the row losses in double in
// a fixed order into loss[0]; span_cross_entropy_backward_f32 any grid/block (grid-stride over
// N·C), dy read from the device ([] tensor), so nothing is synchronised with the host.

// Repeated on purpose in attention_softmax.cu (att_block_reduce): each .cu is compiled alone by NVRTC, with no header of span's to share.
static __device__ float ce_block_reduce(float v, float* red, bool isMax) {
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = isMax ? fmaxf(v, w) : v + w;
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  __syncthreads();
  if (lane == 0) red[warp] = v;
  __syncthreads();
  v = lane < warps ? red[lane] : red[0];  // red[0]: a neutral pad for max, removed below for sums
  if (!isMax && lane >= warps) v = 0.0f;
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = isMax ? fmaxf(v, w) : v + w;
  }
  return v;
}

// logits [N, C], labels [N] int32 → lse [N], rowLoss [N] (lse − logits[label], NaN when out of range). C ≥ 1.
extern "C" __global__ void span_cross_entropy_rows_f32(const float* __restrict__ logits, const int* __restrict__ labels, float* __restrict__ lse,
                                                       float* __restrict__ rowLoss, long long N, int C) {
  __shared__ float red[32];
  for (long long n = blockIdx.x; n < N; n += gridDim.x) {
    const float* xr = logits + n * C;
    float mx = xr[0];
    for (int j = threadIdx.x; j < C; j += blockDim.x) mx = fmaxf(mx, xr[j]);
    mx = ce_block_reduce(mx, red, true);
    float s = 0.0f;
    for (int j = threadIdx.x; j < C; j += blockDim.x) s += expf(xr[j] - mx);
    s = ce_block_reduce(s, red, false);
    if (threadIdx.x == 0) {
      const float l = mx + logf(s);
      const int y = labels[n];
      lse[n] = l;
      rowLoss[n] = y == -1 ? 0.0f : (y < 0 || y >= C) ? __int_as_float(0x7fffffff) : l - xr[y];
    }
  }
}

// Repeated on purpose in sum_squares.cu (span_sum_partials_f32's block sum in double): each .cu is compiled alone by NVRTC, with no header of span's to share.
// loss[0] = Σ rowLoss in double, one block: thread t sums rows t, t + blockDim.x, …; thread 0 adds those in order.
extern "C" __global__ void span_cross_entropy_total_f32(const float* __restrict__ rowLoss, float* __restrict__ loss, long long N) {
  __shared__ double part[1024];
  double s = 0.0;
  for (long long n = threadIdx.x; n < N; n += blockDim.x) s += rowLoss[n];
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (unsigned i = 0; i < blockDim.x; i++) t += part[i];
    loss[0] = (float)t;
  }
}

// dlogits [N, C] from logits, labels, lse and dy (a device scalar).
extern "C" __global__ void span_cross_entropy_backward_f32(const float* __restrict__ logits, const int* __restrict__ labels,
                                                           const float* __restrict__ lse, const float* __restrict__ dy,
                                                           float* __restrict__ dlogits, long long N, long long C) {
  const float d = dy[0];
  const long long total = N * C, stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const long long n = i / C, j = i - n * C;
    const int y = labels[n];
    float o = y == -1 ? 0.0f : expf(logits[i] - lse[n]) * d;  // −1: a padding row, no gradient
    if (j == y) o -= d;
    dlogits[i] = o;
  }
}
