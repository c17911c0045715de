// Elementwise unary ops and casts (tfjs Neg, Square, Sqrt, Rsqrt, Exp, Log, Tanh, Relu, Step,
// Abs, Erf, Sigmoid, Reciprocal, Log1p, Floor, Ceil, Sign, LogicalNot; Cast between float32,
// int32 and bool, bool being int32 0/1 on the device). One thread per element, grid-stride.
//
// CPU reference (tfjs-backend-cpu unary kernels): y[i] = f(x[i]); Step is x > 0 ? 1 : alpha
// (NaN stays NaN); Cast float→int32 truncates toward zero, →bool is x != 0.
#define SPAN_LOOP for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)

__device__ __forceinline__ float unaryOp(int op, float x, float alpha) {
  switch (op) {
    case 0: return -x;
    case 1: return x * x;
    case 2: return sqrtf(x);
    case 3: return 1.0f / sqrtf(x);
    case 4: return expf(x);
    case 5: return logf(x);
    case 6: return tanhf(x);
    case 7: return x > 0.0f ? x : (x != x ? x : 0.0f);
    case 8: return x != x ? x : (x > 0.0f ? 1.0f : alpha);
    case 9: return fabsf(x);
    case 10: return erff(x);
    case 11: return 1.0f / (1.0f + expf(-x));
    case 12: return 1.0f / x;
    case 13: return log1pf(x);
    case 14: return floorf(x);
    case 15: return ceilf(x);
    default: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : (x != x ? x : 0.0f));
  }
}

__device__ __forceinline__ int unaryOp(int op, int x) {
  switch (op) {
    case 0: return -x;
    case 1: return x * x;
    case 7: return x > 0 ? x : 0;
    case 9: return x < 0 ? -x : x;
    case 16: return x > 0 ? 1 : (x < 0 ? -1 : 0);
    default: return x == 0;  // 30: LogicalNot of a bool
  }
}

extern "C" __global__ void span_unary_f32(const float* x, float* y, int op, float alpha, long long n) {
  SPAN_LOOP y[i] = unaryOp(op, x[i], alpha);
}

extern "C" __global__ void span_unary_i32(const int* x, int* y, int op, long long n) {
  SPAN_LOOP y[i] = unaryOp(op, x[i]);
}

extern "C" __global__ void span_cast_f32_i32(const float* x, int* y, long long n) {
  SPAN_LOOP y[i] = (int)x[i];
}

extern "C" __global__ void span_cast_i32_f32(const int* x, float* y, long long n) {
  SPAN_LOOP y[i] = (float)x[i];
}

extern "C" __global__ void span_cast_f32_bool(const float* x, int* y, long long n) {
  SPAN_LOOP y[i] = x[i] != 0.0f;
}

extern "C" __global__ void span_cast_i32_bool(const int* x, int* y, long long n) {
  SPAN_LOOP y[i] = x[i] != 0;
}
