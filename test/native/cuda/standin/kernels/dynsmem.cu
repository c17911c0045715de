// Dynamic shared memory: each block reverses its slice of the input through extern __shared__.
extern "C" __global__ void reverse_block(const float* in, float* out, int n) {
  extern __shared__ float buf[];
  int base = blockIdx.x * blockDim.x, t = threadIdx.x;
  if (base + t < n) buf[t] = in[base + t];
  __syncthreads();
  int src = blockDim.x - 1 - t;
  if (base + t < n && base + src < n) out[base + t] = buf[src];
}
