// Warp intrinsics on a block whose last warp is partial (48 threads: warp 1 has 16 lanes):
// shuffles of every kind and width, ballot/any/all, and the __syncthreads_count/_and/_or forms.
extern "C" __global__ void warp_ops(const int* in, int* out) {
  int t = threadIdx.x, lane = t % 32;
  unsigned full = 0xffffffffu;
  int v = in[t];
  int* o = out + t * 10;
  o[0] = __shfl_sync(full, v, 3, 16);         // lane 3 of each 16-lane segment
  o[1] = __shfl_up_sync(full, v, 1, 8);       // from lane-1 within 8-lane segments
  o[2] = __shfl_down_sync(full, v, 2);        // from lane+2
  o[3] = __shfl_xor_sync(full, v, 1);         // the neighbour
  o[4] = (int)__ballot_sync(full, t % 3 == 0);
  o[5] = __any_sync(full, t == 40);
  o[6] = __all_sync(full, t < 40);
  o[7] = __syncthreads_count(v > 100);
  o[8] = __syncthreads_and(v >= 0);
  o[9] = __syncthreads_or(lane == 5 && t > 32);
}
