// Row reductions of a [rows, cols] tensor (the reduced axes moved last by the backend): tfjs
// Sum, Mean, Max, Min, Prod, Any, All, and ArgMax/ArgMin, float32 and int32. Simple and
// deterministic: one thread per row, a double accumulator for sums as tfjs' cpu backend keeps
// (a JS number). The next issue replaces it by a block-per-row reduction.
//
// CPU reference (tfjs-backend-cpu Sum/Max/ArgMax): out[r] = op over c of x[r*cols + c];
// ArgMax keeps the first index of the maximum; cols = 0 gives the op's identity (sum 0).
#define SPAN_ROWS for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (long long)gridDim.x * blockDim.x)

template <class T>
__device__ __forceinline__ double reduceRow(const T* x, int op, long long cols) {
  double acc = op == 4 || op == 6 ? 1.0 : 0.0;
  for (long long c = 0; c < cols; c++) {
    const double v = (double)x[c];
    if (c == 0 && (op == 1 || op == 2)) acc = v;
    else if (op == 0 || op == 3) acc += v;
    else if (op == 1) acc = (v > acc || v != v) ? v : acc;
    else if (op == 2) acc = (v < acc || v != v) ? v : acc;
    else if (op == 4) acc *= v;
    else if (op == 5) acc = (acc != 0.0 || v != 0.0) ? 1.0 : 0.0;
    else acc = (acc != 0.0 && v != 0.0) ? 1.0 : 0.0;
  }
  return op == 3 ? acc / (double)cols : acc;
}

/** op: 0 sum, 1 max, 2 min, 3 mean, 4 prod, 5 any, 6 all. */
extern "C" __global__ void span_reduce_f32(const float* x, float* out, int op, long long rows, long long cols) {
  SPAN_ROWS out[r] = (float)reduceRow(x + r * cols, op, cols);
}

extern "C" __global__ void span_reduce_i32(const int* x, int* out, int op, long long rows, long long cols) {
  SPAN_ROWS out[r] = (int)reduceRow(x + r * cols, op, cols);
}

template <class T>
__device__ __forceinline__ int argRow(const T* x, int isMin, long long cols) {
  int best = 0;
  for (long long c = 1; c < cols; c++)
    if (isMin ? x[c] < x[best] : x[c] > x[best]) best = (int)c;
  return best;
}

extern "C" __global__ void span_argreduce_f32(const float* x, int* out, int isMin, long long rows, long long cols) {
  SPAN_ROWS out[r] = argRow(x + r * cols, isMin, cols);
}

extern "C" __global__ void span_argreduce_i32(const int* x, int* out, int isMin, long long rows, long long cols) {
  SPAN_ROWS out[r] = argRow(x + r * cols, isMin, cols);
}

/** Softmax of each row (tfjs Softmax over the last axis): exp(x − max) / Σ exp(x − max). */
extern "C" __global__ void span_softmax_f32(const float* x, float* y, long long rows, long long cols) {
  SPAN_ROWS {
    const float* xr = x + r * cols;
    float m = xr[0];
    for (long long c = 1; c < cols; c++) m = xr[c] > m ? xr[c] : m;
    double s = 0.0;
    for (long long c = 0; c < cols; c++) s += (double)expf(xr[c] - m);
    for (long long c = 0; c < cols; c++) y[r * cols + c] = (float)((double)expf(xr[c] - m) / s);
  }
}
