// SpanLinearGrad's bias gradient without an activation on the cuda backend, fp32 (issue 21 item 3):
// db = Σ_rows dz over [rows, cols] in two kernels that use the whole device, where
// linear_backward.cu's span_bias_grad_f32 ran a thread per column over every row (768 threads for
// BERT-base's Q, K, V and output projections: a few warps on a GPU of hundreds). The same sum order,
// so the same bits: float over runs of 32 rows (each chunk's sum written by the first kernel), then
// the chunks added in double, in order (the second), as native/src/fused.cc's col_sum.
// One source, no headers: NVRTC compiles it on a GPU, the stand-in NVRTC on the CPU.
//
// CPU reference: partials[k, c] = (float) Σ_{r in chunk k} dz[r, c]  (rows 32k … min(32k + 32, rows) − 1, in order)
//                db[c] = (float) Σ_k (double) partials[k, c]        (k in order)
//
// span_bias_grad_partials_f32: a 2-D grid, x over columns (a warp reads 32 adjacent columns of a
// row), y over chunks of 32 rows, grid-stride both ways; any grid and block.
// span_bias_grad_sum_f32: one thread per column (grid-stride); chunks = 0 writes zeros. No atomics.

// dz [rows, cols]; partials [ceil(rows/32), cols].
extern "C" __global__ void span_bias_grad_partials_f32(const float* __restrict__ dz, float* __restrict__ partials, long long rows, long long cols) {
  const long long chunks = (rows + 31) / 32;
  for (long long k = blockIdx.y; k < chunks; k += gridDim.y)
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
      float p = 0.0f;
      const long long r1 = 32 * k + 32 < rows ? 32 * k + 32 : rows;
      for (long long r = 32 * k; r < r1; r++) p += dz[r * cols + j];
      partials[k * cols + j] = p;
    }
}

// Repeated on purpose in linear_gelu.cu (span_gelu_bias_sum_f32, the chunks' sum): each .cu is compiled alone by NVRTC, with no header of span's to share.
// db [cols] = Σ_k partials[k, ·] in double, k in order.
extern "C" __global__ void span_bias_grad_sum_f32(const float* __restrict__ partials, float* __restrict__ db, long long chunks, long long cols) {
  for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < cols; j += (long long)gridDim.x * blockDim.x) {
    double s = 0.0;
    for (long long k = 0; k < chunks; k++) s += partials[k * cols + j];
    db[j] = (float)s;
  }
}
