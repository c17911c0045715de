// LayerNorm forward, one block per row (llm.c's layout: a kernel per file, its CPU reference
// in the harness): two block reductions through warp shuffles and a shared array of warp sums.
// -DPLANT_MISSING_BARRIER removes the barrier before that array is reused: the race the
// emulator's warp-at-a-time schedule must catch.
__device__ float block_sum(float v, float* shared) {
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < warps ? shared[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
#ifndef PLANT_MISSING_BARRIER
  __syncthreads();  // every warp has read `shared` before the next call writes it
#endif
  return v;
}

extern "C" __global__ void layernorm_forward(float* __restrict__ out, float* __restrict__ mean, float* __restrict__ rstd,
                                             const float* __restrict__ inp, const float* __restrict__ weight,
                                             const float* __restrict__ bias, int N, int C) {
  __shared__ float shared[32];
  int row = blockIdx.x;
  if (row >= N) return;
  const float* x = inp + (size_t)row * C;
  float s = 0.0f;
  for (int i = threadIdx.x; i < C; i += blockDim.x) s += x[i];
  float m = block_sum(s, shared) / C;
  float v = 0.0f;
  for (int i = threadIdx.x; i < C; i += blockDim.x) {
    float d = x[i] - m;
    v += d * d;
  }
  float r = rsqrtf(block_sum(v, shared) / C + 1e-5f);
  for (int i = threadIdx.x; i < C; i += blockDim.x) out[(size_t)row * C + i] = (x[i] - m) * r * weight[i] + bias[i];
  if (threadIdx.x == 0) {
    mean[row] = m;
    rstd[row] = r;
  }
}
