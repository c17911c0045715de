// Kernels that must fail: a deadlock (half a warp at a barrier, the other half at a shuffle it
// never completes), a shuffle some lanes never join, a failed assert, and a pointer argument.
extern "C" __global__ void barrier_vs_shuffle(float* x) {
  float v = x[threadIdx.x];
  if (threadIdx.x < 16) __syncthreads();
  else v = __shfl_xor_sync(0xffffffff, v, 1);
  x[threadIdx.x] = v;
}

extern "C" __global__ void shuffle_never_joined(float* x) {
  float v = x[threadIdx.x];
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffff, v, 16);
  __syncthreads();
  x[threadIdx.x] = v;
}

extern "C" __global__ void asserts(const int* x) { assert(x[threadIdx.x] >= 0); }

extern "C" __global__ void touch(float* x) { x[threadIdx.x] += 1.0f; }

extern "C" __global__ void overrun(float* x) { x[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

extern "C" __global__ void indirect(float** table) { table[0][threadIdx.x] = 1.0f; }
