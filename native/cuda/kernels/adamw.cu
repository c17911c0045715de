// SpanAdamW on the cuda backend: one AdamW update of one parameter tensor (torch.optim.AdamW,
// decoupled weight decay), the arithmetic of native/src/ops.cc adamw in the same float order:
//   g' = g·scale;  m' = β1·m + (1−β1)·g';  v' = β2·v + (1−β2)·g'·g'
//   p' = p·(1 − lr·wd) − (lr/bc1)·(m' / (√(v'/bc2) + ε))
// bc1 = 1 − β1^t and bc2 = 1 − β2^t are the bias corrections of step t (src/core/train/optim.ts
// computes them on the host, they are step constants); wd is 0 for the parameters optim.ts
// exempts from decay (biases, LayerNorm), so the masking is the caller's; scale is the clipping
// factor read from DEVICE memory (span_clip_factor_f32 in sum_squares.cu writes it), so the step
// needs no host synchronisation. p2, m2, v2 may be p, m, v (each element is read before written).
// One launch per tensor, any grid and block (grid-stride); issue 21: one launch for all tensors.
extern "C" __global__ void span_adamw_f32(const float* p, const float* m, const float* v, const float* __restrict__ g, float* p2, float* m2,
                                          float* v2, long long n, float lr, float beta1, float beta2, float eps, float wd, float bc1,
                                          float bc2, const float* __restrict__ scale) {
  const float s = scale[0], keepW = 1.0f - lr * wd, step = lr / bc1;
  const long long stride = (long long)gridDim.x * blockDim.x;
  // Repeated on purpose in adamw_multi.cu (the same AdamW update per element): each .cu is compiled alone by NVRTC, with no header of span's to share.
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float gi = g[i] * s;
    const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
    const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    const float pi = p[i];
    m2[i] = mi;
    v2[i] = vi;
    p2[i] = pi * keepW - step * (mi / (sqrtf(vi / bc2) + eps));
  }
}
