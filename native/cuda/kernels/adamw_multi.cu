// Multi-tensor AdamW and the squared global gradient norm on the cuda backend (issue 21 item 4):
// every parameter of a step in ONE launch each, through a table on the device, with the clipping
// factor computed and read on the device (no host synchronisation in the step).
//
// The table (uploaded once per step, SpanTensorEntry below, 56 bytes per tensor): the device
// addresses of p, m, v (updated in place) and g, n (elements), chunk0 (the number of CHUNK-element
// chunks of the tensors before it: tensor t owns chunks [chunk0_t, chunk0_t + ceil(n_t / CHUNK))),
// the tensor's learning rate (the step's lr times its lrScale, multiplied on the host in double
// as src/core/train/optim.ts does) and its weight decay (0 for the parameters optim.ts exempts:
// biases and LayerNorm; the per-tensor flag). A block takes chunks b, b + gridDim.x, ... and finds
// a chunk's tensor by binary search over chunk0; its threads stride over the chunk.
//
// span_multi_sum_squares_clip_f32(table, count, chunk, totalChunks, partials, ticket, maxNorm, sumsq, factor)
//   CPU reference: total = Σ_t Σ_i (double)g_t[i]²; sumsq = (float)total;
//   factor = min(1, maxNorm / (√(double)sumsq + 1e-6)), 1 when that is NaN (torch's clip_grad_norm_ and
//   src/core/train/optim.ts clipByGlobalNorm, whose norm is √ of the float32 sum; sum_squares.cu's
//   span_clip_factor_f32 likewise). Block b writes partials[b] (double; its threads added in order);
//   the last block to finish (an atomic ticket, reset to 0 for the next launch; the caller zeroes it
//   once) adds partials[0 .. gridDim.x) in order: the bits depend only on the grid and block sizes,
//   not on the schedule. Grid ≤ 1024 blocks, block ≤ 1024 threads.
// span_adamw_multi_f32(table, count, chunk, totalChunks, beta1, beta2, eps, bc, scale)
//   Per element, exactly adamw.cu's span_adamw_f32 (the arithmetic of native/src/ops.cc adamw, same
//   float order) with lr = entry.lr, wd = entry.wd, the bias corrections bc1 = bc[0], bc2 = bc[1] and
//   the gradient times scale[0] read on the device: the per-step values are device data, not kernel
//   arguments, so two steps' launches are equal (a CUDA Graph replays them; docs/cuda-backend.md).
//   A NaN scale[0] changes nothing: loss_scale.cu's skipped step (the clipping factor here is never
//   NaN: a NaN norm gives 1). Any grid and block.

struct SpanTensorEntry {
  unsigned long long p, m, v, g;
  long long n, chunk0;
  float lr, wd;
};

// The tensor that owns chunk c: the last t with chunk0 ≤ c (an empty tensor owns no chunk and shares
// its chunk0 with the next one, so it is never the last such t; callers leave empty tensors out anyway).
__device__ static int spanOwner(const SpanTensorEntry* __restrict__ table, int count, long long c) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (table[mid].chunk0 <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

extern "C" __global__ void span_multi_sum_squares_clip_f32(const SpanTensorEntry* __restrict__ table, int count, long long chunk, long long totalChunks,
                                                           double* __restrict__ partials, unsigned int* ticket, float maxNorm, float* __restrict__ sumsq,
                                                           float* __restrict__ factor) {
  __shared__ double part[1024];
  __shared__ bool last;
  double s = 0.0;
  for (long long c = blockIdx.x; c < totalChunks; c += gridDim.x) {
    const SpanTensorEntry e = table[spanOwner(table, count, c)];
    const float* g = (const float*)e.g;
    const long long start = (c - e.chunk0) * chunk, end = start + chunk < e.n ? start + chunk : e.n;
    for (long long i = start + threadIdx.x; i < end; i += blockDim.x) s += (double)g[i] * g[i];
  }
  part[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0.0;
    for (unsigned k = 0; k < blockDim.x; k++) t += part[k];
    partials[blockIdx.x] = t;
    __threadfence();  // the partial is visible before the ticket says so
    last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  double t = 0.0;
  for (unsigned b = 0; b < gridDim.x; b++) t += ((volatile double*)partials)[b];
  const float f = (float)t;
  sumsq[0] = f;
  const double coef = maxNorm / (sqrt((double)f) + 1e-6);
  factor[0] = coef < 1.0 ? (float)coef : 1.0f;
  ticket[0] = 0u;  // ready for the next launch
}

extern "C" __global__ void span_adamw_multi_f32(const SpanTensorEntry* __restrict__ table, int count, long long chunk, long long totalChunks, float beta1,
                                                float beta2, float eps, const float* __restrict__ bc, const float* __restrict__ scale) {
  const float s = scale[0], bc1 = bc[0], bc2 = bc[1];
  if ((__float_as_uint(s) & 0x7fffffffu) > 0x7f800000u) return;  // NaN: a step loss_scale.cu skips (an overflow); nothing changes
  for (long long c = blockIdx.x; c < totalChunks; c += gridDim.x) {
    const SpanTensorEntry e = table[spanOwner(table, count, c)];
    float *p = (float*)e.p, *m = (float*)e.m, *v = (float*)e.v;
    const float* g = (const float*)e.g;
    const float lr = e.lr, keepW = 1.0f - lr * e.wd, step = lr / bc1;
    const long long start = (c - e.chunk0) * chunk, end = start + chunk < e.n ? start + chunk : e.n;
    // Repeated on purpose in adamw.cu (the same AdamW update per element): each .cu is compiled alone by NVRTC, with no header of span's to share.
    for (long long i = start + threadIdx.x; i < end; i += blockDim.x) {
      const float gi = g[i] * s;
      const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
      const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
      const float pi = p[i];
      m[i] = mi;
      v[i] = vi;
      p[i] = pi * keepW - step * (mi / (sqrtf(vi / bc2) + eps));
    }
  }
}
