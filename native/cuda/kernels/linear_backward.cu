// SpanLinearGrad's elementwise and reduction parts on the cuda backend (the two GEMMs, dx = dz·W
// and dW = dzᵀ·x, are cuBLASLt's): the GeLU (erf) derivative and the bias gradient, as
// native/src/fused.cc linear_backward and fused-composite.ts linearGrad compute them. The forward
// epilogue is bias_gelu.cu. Issue 21 fuses these into the GEMM's epilogue.
//
// CPU reference: dz = dy·(½(1 + erf(z/√2)) + z·φ(z)), φ(z) = e^(−z²/2)/√(2π)  (BERT's exact GeLU)
//                db[j] = Σ_r dz[r, j]  (float over runs of 32 rows, then in double, as native's col_sum)
//
// span_gelu_backward_f32: any grid and block (grid-stride over n); dz may be dy.
// span_bias_grad_f32: one thread per column (grid-stride over cols), rows summed in order, so the
// result is deterministic; rows = 0 writes zeros.
extern "C" __global__ void span_gelu_backward_f32(const float* dy, const float* __restrict__ z, float* dz, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = z[i];
    const float d = 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * 0.39894228040143268f * expf(-0.5f * v * v);
    dz[i] = dy[i] * d;
  }
}

extern "C" __global__ void span_bias_grad_f32(const float* __restrict__ dz, float* __restrict__ db, long long rows, long long cols) {
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
    double s = 0.0;
    for (long long r0 = 0; r0 < rows; r0 += 32) {
      float p = 0.0f;
      const long long r1 = r0 + 32 < rows ? r0 + 32 : rows;
      for (long long r = r0; r < r1; r++) p += dz[r * cols + j];
      s += p;
    }
    db[j] = (float)s;
  }
}
