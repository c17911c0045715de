// SpanLinear with GeLU on the cuda backend, fp32 (issue 21 item 3): the epilogue after the plain
// (EPILOGUE_DEFAULT) cuBLASLt GEMM in one pass, and the backward's elementwise part and bias gradient
// in one kernel. BERT's exact (erf) GeLU, as native/src/fused.cc linear_forward / linear_backward
// and fused-composite.ts (geluOf, geluDerivative) compute it. cuBLASLt's GELU epilogue is the tanh
// form (up to 4.7e-4 away), so it is not used.
// Replaces bias_gelu.cu's span_bias_gelu_f32 + span_bias_add_f32 (two passes over z: two reads, two
// writes) by one pass (one read, two writes), and linear_backward.cu's span_gelu_backward_f32 +
// span_bias_grad_f32 (dz written, then read again by a thread per column) by a kernel that writes dz
// and per-chunk column sums, and one that adds the chunks (1/32 of dz's size).
// One source, no headers: NVRTC compiles it on a GPU, the stand-in NVRTC on the CPU.
//
// CPU reference, over z [rows, cols] (the GEMM's x·Wᵀ without bias) and bias [cols]:
//   forward:  v = z[r,c] + bias[c];  z[r,c] ← v (kept for the backward pass);  y[r,c] = ½·v·(1 + erf(v/√2))
//   backward: dz[r,c] = dy[r,c]·(½(1 + erf(z/√2)) + z·φ(z)), φ(z) = e^(−z²/2)/√(2π), z the kept v
//             db[c] = Σ_r dz[r,c]   (float over runs of 32 rows, then in double, as native's col_sum)
//
// span_bias_gelu_keep_f32: any grid and block (grid-stride over elements).
// span_gelu_backward_partials_f32: a 2-D grid, x over columns (a warp reads 32 adjacent columns of a
// row), y over chunks of 32 rows (grid-stride both ways); each thread sums its column over its chunk
// in row order. span_gelu_bias_sum_f32 then adds the chunks in order: deterministic, no atomics,
// the sum order of native's col_sum, with every element's work in parallel (not a thread per column).

extern "C" __global__ void span_bias_gelu_keep_f32(float* z, const float* __restrict__ bias, float* __restrict__ y, long long rows, long long cols) {
  const long long n = rows * cols;
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = z[i] + bias[i % cols];
    z[i] = v;
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// The two derivatives of the backward pass: BERT's erf GeLU (the default), and the opt-in tanh form
// (SPAN_CUDA_GELU_EPILOGUE=tanh: the forward is cuBLASLt's GELU_AUX_BIAS epilogue, z its aux), the
// derivative of cuBLASLt's gelu(z) = ½·z·(1 + t), t = tanh(√(2/π)·(z + 0.044715·z³)):
//   gelu′(z) = ½(1 + t) + ½·z·(1 − t²)·√(2/π)·(1 + 3·0.044715·z²)
struct ErfGeluGrad {
  __device__ __forceinline__ float operator()(float v) const { return 0.5f * (1.0f + erff(v * 0.70710678118654752f)) + v * 0.39894228040143268f * expf(-0.5f * v * v); }
};

struct TanhGeluGrad {
  __device__ __forceinline__ float operator()(float v) const {
    const float t = tanhf(0.79788456080286536f * (v + 0.044715f * v * v * v));
    return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * v * v);
  }
};

// dy, z, dz [rows, cols] (dz may be dy); partials [ceil(rows/32), cols]: dz = dy·gelu′(z), and the
// float sum of dz over the 32 rows of chunk k (fewer in the last), rows in order.
template <class Grad>
__device__ __forceinline__ void backwardPartials(Grad grad, const float* dy, const float* __restrict__ z, float* dz, float* __restrict__ partials,
                                                 long long rows, long long cols) {
  const long long chunks = (rows + 31) / 32;
  for (long long k = blockIdx.y; k < chunks; k += gridDim.y)
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
      float p = 0.0f;
      const long long r1 = 32 * k + 32 < rows ? 32 * k + 32 : rows;
      for (long long r = 32 * k; r < r1; r++) {
        const long long i = r * cols + j;
        const float d = dy[i] * grad(z[i]);
        dz[i] = d;
        p += d;
      }
      partials[k * cols + j] = p;
    }
}

extern "C" __global__ void span_gelu_backward_partials_f32(const float* dy, const float* __restrict__ z, float* dz, float* __restrict__ partials,
                                                           long long rows, long long cols) {
  backwardPartials(ErfGeluGrad(), dy, z, dz, partials, rows, cols);
}

// Repeated on purpose in bias_grad.cu (span_bias_grad_sum_f32, the chunks' sum): each .cu is compiled alone by NVRTC, with no header of span's to share.
// db [cols] = Σ_k partials[k, ·] in double, k in order. One thread per column (any grid and block);
// chunks = 0 writes zeros.
extern "C" __global__ void span_gelu_bias_sum_f32(const float* __restrict__ partials, float* __restrict__ db, long long chunks, long long cols) {
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
    double s = 0.0;
    for (long long k = 0; k < chunks; k++) s += partials[k * cols + j];
    db[j] = (float)s;
  }
}

// span_gelu_backward_partials_f32 with the tanh form's derivative (TanhGeluGrad above).
extern "C" __global__ void span_gelu_tanh_backward_partials_f32(const float* dy, const float* __restrict__ z, float* dz, float* __restrict__ partials,
                                                                long long rows, long long cols) {
  backwardPartials(TanhGeluGrad(), dy, z, dz, partials, rows, cols);
}
