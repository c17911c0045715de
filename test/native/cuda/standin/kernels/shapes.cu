// Threads that exit before a barrier (it counts them as arrived), and 2-D grids and blocks.
extern "C" __global__ void early_exit(int* out) {
  __shared__ int s[64];
  if (threadIdx.x >= 40) return;
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  out[threadIdx.x] = s[39 - threadIdx.x];
}

extern "C" __global__ void grid2d(int* out) {
  int block = blockIdx.y * gridDim.x + blockIdx.x;
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  out[block * blockDim.x * blockDim.y + t] = blockIdx.x * 1000000 + blockIdx.y * 10000 + threadIdx.y * 100 + threadIdx.x;
}

// The math functions kernels use, and bf16 through conversions, a shuffle and an atomic.
#include <cuda_bf16.h>

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678f)); }

extern "C" __global__ void math_ops(const float* __restrict__ x, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[i * 6 + 0] = expf(v);
  out[i * 6 + 1] = gelu_erf(v);
  out[i * 6 + 2] = tanhf(v);
  out[i * 6 + 3] = rsqrtf(fabsf(v) + 1.0f);
  out[i * 6 + 4] = __expf(-v);
  out[i * 6 + 5] = fmaxf(v, 0.0f) + fminf(v, 0.0f) * 0.5f;
}

extern "C" __global__ void bf16_ops(const float* x, __nv_bfloat16* out, __nv_bfloat16* sum) {
  __nv_bfloat16 b = __float2bfloat16(x[threadIdx.x]);
  __nv_bfloat16 n = __shfl_xor_sync(0xffffffff, b, 1);
  out[threadIdx.x] = n;
  atomicAdd(sum, __float2bfloat16(1.0f));
}

// Reads a __shared__ array that only block 0 writes: on a GPU block 1 reads garbage; here the
// emulator fills shared memory with 0xff bytes before every block, so it reads NaN.
extern "C" __global__ void stale_shared(float* out) {
  __shared__ float s[64];
  if (blockIdx.x == 0) s[threadIdx.x] = 1.0f;
  __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
}
