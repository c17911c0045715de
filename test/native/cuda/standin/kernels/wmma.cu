// nvcuda::wmma on the emulator (include/mma.h): a 16×16 product with K = 32 (two mma_sync into one
// accumulator, loaded from memory), B row- or column-major, stored row- or column-major; and
// misuse that must fail: half a warp calling mma_sync, a partial warp, lanes passing different
// pointers, a misaligned pointer.
#include <cuda_bf16.h>
#include <mma.h>
using namespace nvcuda;

// d [16, 16] = a [16, 32] (row-major) · b [32, 16] (row-major if !bcol, else column-major: (k, n) at b[n·32 + k]) + c [16, 16].
extern "C" __global__ void wmma_gemm(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c, float* d, int bcol, int dcol) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fr;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fc;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  for (int kk = 0; kk < 2; kk++) {
    wmma::load_matrix_sync(fa, a + kk * 16, 32);
    if (bcol) {
      wmma::load_matrix_sync(fc, b + kk * 16, 32);
      wmma::mma_sync(acc, fa, fc, acc);
    } else {
      wmma::load_matrix_sync(fr, b + kk * 16 * 16, 16);
      wmma::mma_sync(acc, fa, fr, acc);
    }
  }
  for (int i = 0; i < acc.num_elements; i++) acc.x[i] *= 2.0f;  // element-wise: layout-free
  wmma::store_matrix_sync(d, acc, 16, dcol ? wmma::mem_col_major : wmma::mem_row_major);
}

__shared__ __align__(32) __nv_bfloat16 wm_a[256];
__shared__ __align__(32) float wm_c[256 + 8];

static __device__ void wm_product(int lanesOffset) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, wm_a, 16);
  wmma::load_matrix_sync(fb, wm_a, 16);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::store_matrix_sync(wm_c + lanesOffset, acc, 16, wmma::mem_row_major);
}

static __device__ void wm_fill() {
  for (int i = threadIdx.x; i < 256; i += blockDim.x) wm_a[i] = __float2bfloat16(1.0f);
  __syncthreads();
}

extern "C" __global__ void wmma_half_warp(int*) {
  wm_fill();
  if (threadIdx.x < 16) wm_product(0);
}

extern "C" __global__ void wmma_partial_warp(int*) {
  wm_fill();
  wm_product(0);  // launched with 48 threads: warp 1 has 16 lanes
}

extern "C" __global__ void wmma_lanes_differ(int*) {
  wm_fill();
  wm_product(threadIdx.x < 8 ? 0 : 8);  // two store pointers within one warp
}

extern "C" __global__ void wmma_misaligned(int*) {
  wm_fill();
  wm_product(4);  // 16 bytes past a 32-byte boundary
}

extern "C" __global__ void wmma_whole_warp(int* out) {
  wm_fill();
  wm_product(0);
  __syncthreads();
  if (threadIdx.x == 0) out[0] = static_cast<int>(wm_c[0]);  // 16: a row of ones times a column of ones
}

// What lane l holds in x[i] of a matrix_a fragment loaded from a [16, 16] matrix of 0 … 255: out[l·8 + i].
extern "C" __global__ void wmma_layout(const __nv_bfloat16* a, float* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
  wmma::load_matrix_sync(fa, a, 16);
  for (int i = 0; i < fa.num_elements; i++) out[threadIdx.x * fa.num_elements + i] = static_cast<float>(fa.x[i]);
}

// d [16, 16] = a [16, 16] · b [16, 16] + c (all row-major fp32) on tf32: two m16n16k8 steps, each
// fragment element rounded by __float_to_tf32 after the load (element-wise: layout-free).
extern "C" __global__ void wmma_gemm_tf32(const float* a, const float* b, const float* c, float* d) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
  wmma::load_matrix_sync(acc, c, 16, wmma::mem_row_major);
  for (int kk = 0; kk < 2; kk++) {
    wmma::load_matrix_sync(fa, a + kk * 8, 16);
    wmma::load_matrix_sync(fb, b + kk * 8 * 16, 16);
    for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
    for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    wmma::mma_sync(acc, fa, fb, acc);
  }
  wmma::store_matrix_sync(d, acc, 16, wmma::mem_row_major);
}
