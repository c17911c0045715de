// Index kernels: tfjs GatherV2 (batchDims 0), ScatterNd, Range and Select, on 4-byte elements.
// CPU references:
//   gather:  out[o, j, i] = params[o, idx[j], i] (params [outer, axis, inner]); an index
//            outside [0, axis) gives 0 (tfjs' cpu backend throws before calling).
//   scatter: out = 0; out[Σ_k idx[u, k]·stride_k + i] += updates[u, i] (duplicates add up).
//   range:   out[i] = start + i·step.    select: out[i] = cond[i / condInner] ? a[i] : b[i].
#define SPAN_LOOP for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)

extern "C" __global__ void span_gather(const unsigned* params, const int* idx, unsigned* out, long long n, long long axis, long long inner,
                                       long long nIdx) {
  SPAN_LOOP {
    const long long in = i % inner, j = (i / inner) % nIdx, o = i / (inner * nIdx);
    const long long k = idx[j];
    out[i] = (k >= 0 && k < axis) ? params[(o * axis + k) * inner + in] : 0u;
  }
}

/** n = updates' element count; sliceSize elements per index row of sliceRank coordinates (≤ 6). */
template <class T>
__device__ __forceinline__ void scatter(const int* idx, const T* updates, T* out, long long n, int sliceRank, long long sliceSize, long long outSize,
                                        const long long* st) {
  SPAN_LOOP {
    const long long u = i / sliceSize, in = i % sliceSize;
    long long at = 0;
    for (int k = 0; k < sliceRank; k++) at += (long long)idx[u * sliceRank + k] * st[k];
    if (at >= 0 && at + in < outSize) atomicAdd(out + at + in, updates[i]);
  }
}

extern "C" __global__ void span_scatter_nd_f32(const int* idx, const float* updates, float* out, long long n, int sliceRank, long long sliceSize,
                                               long long outSize, long long s0, long long s1, long long s2, long long s3, long long s4,
                                               long long s5) {
  const long long st[6] = {s0, s1, s2, s3, s4, s5};
  scatter(idx, updates, out, n, sliceRank, sliceSize, outSize, st);
}

extern "C" __global__ void span_scatter_nd_i32(const int* idx, const int* updates, int* out, long long n, int sliceRank, long long sliceSize,
                                               long long outSize, long long s0, long long s1, long long s2, long long s3, long long s4,
                                               long long s5) {
  const long long st[6] = {s0, s1, s2, s3, s4, s5};
  scatter(idx, updates, out, n, sliceRank, sliceSize, outSize, st);
}

extern "C" __global__ void span_range_f32(float* out, float start, float step, long long n) {
  SPAN_LOOP out[i] = start + (float)i * step;
}

extern "C" __global__ void span_range_i32(int* out, int start, int step, long long n) {
  SPAN_LOOP out[i] = start + (int)i * step;
}

extern "C" __global__ void span_select(const int* cond, const unsigned* a, const unsigned* b, unsigned* out, long long n, long long condInner) {
  SPAN_LOOP out[i] = cond[i / condInner] ? a[i] : b[i];
}
