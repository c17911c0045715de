// Two block sums in a row where only warp 0 reads the warp partials (the other common shape of
// a block reduction). -DPLANT_MISSING_BARRIER removes the barrier after warp 0's read, so the
// second sum's partials may overwrite the first's before warp 0 has read them.
__device__ float block_sum0(float v, float* partial) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  float total = 0.0f;
  if (warp == 0) {
    v = lane < (int)(blockDim.x / 32) ? partial[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    total = v;  // lane 0 holds the block's sum
  }
#ifndef PLANT_MISSING_BARRIER
  __syncthreads();
#endif
  return total;
}

extern "C" __global__ void sum_and_squares(const float* x, float* out) {
  __shared__ float partial[32];
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  float s = block_sum0(v, partial);
  float q = block_sum0(v * v, partial);
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = s;
    out[2 * blockIdx.x + 1] = q;
  }
}
