// SpanLinear's epilogue on the cuda backend: y = GeLU(x + bias), BERT's exact (erf) GeLU, fp32.
// cuBLASLt's GELU epilogues are the tanh approximation (up to 4.7e-4 away from this one), so
// span adds the bias and applies the erf form itself, after a plain (EPILOGUE_DEFAULT) GEMM.
// One source per kernel, compiled by NVRTC with no headers (tools/check-cuda-kernels.sh compiles
// it for sm_80 and sm_90 with a real NVRTC, and with nvcc -cubin where nvcc is).
//
// CPU reference (src/core/engine/fused-composite.ts geluOf: z · ½(1 + erf(z/√2))):
//   for r in [0, rows), c in [0, cols):
//     v = x[r*cols + c] + bias[c]
//     y[r*cols + c] = 0.5f * v * (1 + erff(v / sqrt(2)))
//
// x, y: [rows, cols] row-major (y may be x); bias: [cols]. A grid-stride loop over elements:
// any grid covers any size, and n = 0 launches nothing useful but is harmless.
extern "C" __global__ void span_bias_gelu_f32(const float* x, const float* __restrict__ bias, float* y, long long rows,
                                              long long cols) {
  const long long n = rows * cols;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i] + bias[i % cols];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// SpanLinear without activation, and the pre-activation z it keeps for GeLU's backward pass:
// y = x + bias over [rows, cols] (y may be x), after the plain GEMM. Same grid-stride launch.
extern "C" __global__ void span_bias_add_f32(const float* x, const float* __restrict__ bias, float* y, long long rows, long long cols) {
  const long long n = rows * cols;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) y[i] = x[i] + bias[i % cols];
}
