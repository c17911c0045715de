// Atomics across blocks: a float sum, integer counts, min/max, 64-bit adds and a CAS loop.
__device__ float atomic_max_float(float* addr, float value) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(fmaxf(value, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

extern "C" __global__ void atomics(const float* x, int n, float* fsum, int* count, unsigned* umax, int* imin, unsigned long long* total, float* fmax) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    atomicAdd(fsum, x[i]);
    atomicAdd(count, 1);
    atomicMax(umax, (unsigned)i);
    atomicMin(imin, -i);
    atomicAdd(total, (unsigned long long)i);
    atomic_max_float(fmax, x[i]);
  }
}
