// nvcuda::wmma for the CUDA-C emulator: the part of CUDA's mma.h span's kernels use, modelled as
// the hardware defines it (CUDA C++ Programming Guide, "Warp Matrix Functions"), not as any GPU
// lays it out. Test-only code.
//
// - Shapes and types: m16n16k16 with __nv_bfloat16 or __half matrix_a/matrix_b (row_major or col_major), and
//   m16n16k8 with precision::tf32 ones (x[] of floats, loaded from float memory; __float_to_tf32 rounds
//   to nearest, ties away, as cvt.rna.tf32.f32), with float accumulators. Others fail to compile here.
// - Fragments are opaque: a lane's x[i] holds the element p = ((32·i + lane)·97 + 13) mod (rows·cols)
//   of the fragment's matrix (row p / cols, column p mod cols), a scrambled layout no GPU has, so a
//   kernel that relies on which element x[i] is gives wrong results here. Element-wise operations
//   applied alike to every x[i] (scaling an accumulator) are layout-free and allowed, as on a GPU.
// - load_matrix_sync, store_matrix_sync, mma_sync are warp-collective: every one of the 32 lanes
//   must call them converged, with the same pointer, ldm and layout; a lane that exited, a partial
//   warp, lanes that differ, or a lane waiting elsewhere end the launch with a message (scheduler.cc
//   checkWmma, or the emulator's deadlock report). fill_fragment is per lane (as on a GPU, it only
//   writes the lane's own x[]). ldm must be a multiple of 16 bytes and the pointer 32-byte aligned.
// - Rounding: bf16 × bf16, half × half and tf32 × tf32 products exact (done in double; a tf32 operand's low 13
//   bits are ignored, as the tensor cores read it: convert with __float_to_tf32 first), accumulated in
//   fp32 starting from c, one rounding per addition, k ascending. A GPU's tensor cores add in an order (and with internal
//   widths) NVIDIA leaves unspecified: compare with fp32 tolerances against a GPU, not bits.
#ifndef SPAN_EMU_MMA_H
#define SPAN_EMU_MMA_H

#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace nvcuda {
namespace wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace precision {
struct tf32 {};
}  // namespace precision

namespace detail {
template <class Use, int M, int N, int K>
struct dims;
template <int M, int N, int K>
struct dims<matrix_a, M, N, K> {
  static constexpr int rows = M, cols = K;
};
template <int M, int N, int K>
struct dims<matrix_b, M, N, K> {
  static constexpr int rows = K, cols = N;
};
template <int M, int N, int K>
struct dims<accumulator, M, N, K> {
  static constexpr int rows = M, cols = N;
};
/** What a fragment's x[] holds: the element type, except tf32 (stored in a float). */
template <class T>
struct storage {
  typedef T type;
};
template <>
struct storage<precision::tf32> {
  typedef float type;
};
/** The shapes and types modelled: m16n16k16 on bf16 or half, m16n16k8 on tf32, float accumulators. */
template <class Use, int M, int N, int K, class T>
constexpr bool modelled() {
  return M == 16 && N == 16 &&
         (std::is_same<Use, accumulator>::value ? std::is_same<T, float>::value && (K == 16 || K == 8)
                                                : (K == 16 && (std::is_same<T, __nv_bfloat16>::value || std::is_same<T, __half>::value)) || (K == 8 && std::is_same<T, precision::tf32>::value));
}
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
  static_assert(detail::modelled<Use, M, N, K, T>(),
                "the emulator's wmma models m16n16k16 __nv_bfloat16 or __half and m16n16k8 precision::tf32 matrix_a/matrix_b, and float accumulators, only");

 public:
  typedef typename detail::storage<T>::type storage_element_type;
  static constexpr int rows = detail::dims<Use, M, N, K>::rows, cols = detail::dims<Use, M, N, K>::cols;
  enum { num_elements = rows * cols / 32 };
  storage_element_type x[num_elements];
};

/** cvt.rna.tf32.f32: to the nearest tf32 (10 mantissa bits, the low 13 bits of the float zero), ties away from zero; NaN stays NaN. */
static inline float __float_to_tf32(float in) {
  uint32_t b = span_emu_bits<uint32_t>(in);
  if ((b & 0x7fffffffu) > 0x7f800000u) return span_emu_bits<float>(0x7fffffffu);
  return span_emu_bits<float>((b + 0x1000u) & ~0x1fffu);  // on the magnitude bits: a tie rounds away; past the largest, to inf
}

namespace detail {
/** Which element of the rows × cols matrix a lane's x[i] holds (a bijection; see the top of this file). */
static inline int element(int i, unsigned lane, int count) { return static_cast<int>(((32u * i + lane) * 97u + 13u) % static_cast<unsigned>(count)); }

/** The value an mma_sync multiplies: bf16 and half as they are; a tf32 operand with the low 13 bits of its float ignored (what the tensor cores read). */
static inline float operand(__nv_bfloat16 x) { return static_cast<float>(x); }
static inline float operand(__half x) { return __half2float(x); }
static inline float operand(float tf32) { return span_emu_bits<float>(span_emu_bits<uint32_t>(tf32) & ~0x1fffu); }

/** The warp meets here: all 32 lanes converged, the same digest of pointer, ldm and layout on each. */
static inline void collective(int op, const void* p, unsigned ldm, int layout, size_t elementBytes, const char* what) {
  if ((ldm * elementBytes) % 16 != 0 || reinterpret_cast<uintptr_t>(p) % 32 != 0) {
    char msg[200];
    snprintf(msg, sizeof msg, "%s: ldm %u must be a multiple of 16 bytes and the pointer 32-byte aligned", what, ldm);
    span_emu_rt->trap(msg);
  }
  uint64_t digest = reinterpret_cast<uintptr_t>(p) * 0x9e3779b97f4a7c15ull ^ (static_cast<uint64_t>(ldm) << 2 | static_cast<unsigned>(layout));
  span_emu_rt->warp(op, 0xffffffffu, digest, 0, 32);
}

/** One exchange area per warp of the block (blocks run one after another), for mma_sync. */
static float mmaBuffer[32][3][256];
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout, class V>
static inline void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, const V& v) {
  for (int i = 0; i < f.num_elements; i++) f.x[i] = static_cast<typename detail::storage<T>::type>(v);
}

/** matrix_a / matrix_b: element (r, c) at p[r·ldm + c] (row_major) or p[c·ldm + r] (col_major); tf32 ones from float memory, as it is. */
template <class Use, int M, int N, int K, class T, class Layout>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const typename detail::storage<T>::type* p, unsigned ldm) {
  static_assert(!std::is_same<Use, accumulator>::value, "an accumulator is loaded with a layout_t");
  constexpr bool row = std::is_same<Layout, row_major>::value;
  detail::collective(SPAN_EMU_WMMA_LOAD, p, ldm, row, sizeof *p, "wmma::load_matrix_sync");
  const unsigned lane = (*span_emu_thread)->lane;
  for (int i = 0; i < f.num_elements; i++) {
    const int e = detail::element(i, lane, f.rows * f.cols), r = e / f.cols, c = e % f.cols;
    f.x[i] = p[row ? r * ldm + c : c * ldm + r];
  }
}

/** The accumulator, from float memory in the given layout. */
template <int M, int N, int K>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, float>& f, const float* p, unsigned ldm, layout_t layout) {
  detail::collective(SPAN_EMU_WMMA_LOAD, p, ldm, layout, 4, "wmma::load_matrix_sync");
  const unsigned lane = (*span_emu_thread)->lane;
  for (int i = 0; i < f.num_elements; i++) {
    const int e = detail::element(i, lane, f.rows * f.cols), r = e / f.cols, c = e % f.cols;
    f.x[i] = p[layout == mem_row_major ? r * ldm + c : c * ldm + r];
  }
}

template <int M, int N, int K>
static inline void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm, layout_t layout) {
  detail::collective(SPAN_EMU_WMMA_STORE, p, ldm, layout, 4, "wmma::store_matrix_sync");
  const unsigned lane = (*span_emu_thread)->lane;
  for (int i = 0; i < f.num_elements; i++) {
    const int e = detail::element(i, lane, f.rows * f.cols), r = e / f.cols, c = e % f.cols;
    p[layout == mem_row_major ? r * ldm + c : c * ldm + r] = f.x[i];
  }
}

/** d = a·b + c. Each lane puts its elements of a, b and c into the warp's area, the warp meets, each lane computes its own elements of d, the warp meets again (the area is free). */
template <int M, int N, int K, class T, class LA, class LB>
static inline void mma_sync(fragment<accumulator, M, N, K, float>& d, const fragment<matrix_a, M, N, K, T, LA>& a, const fragment<matrix_b, M, N, K, T, LB>& b,
                            const fragment<accumulator, M, N, K, float>& c) {
  const unsigned lane = (*span_emu_thread)->lane;
  float(&buf)[3][256] = detail::mmaBuffer[(*span_emu_thread)->warp % 32];
  for (int i = 0; i < a.num_elements; i++) buf[0][detail::element(i, lane, M * K)] = detail::operand(a.x[i]);
  for (int i = 0; i < b.num_elements; i++) buf[1][detail::element(i, lane, K * N)] = detail::operand(b.x[i]);
  for (int i = 0; i < c.num_elements; i++) buf[2][detail::element(i, lane, M * N)] = c.x[i];
  span_emu_rt->warp(SPAN_EMU_WMMA_MMA, 0xffffffffu, 0, 0, 32);
  float out[fragment<accumulator, M, N, K, float>::num_elements];
  for (int i = 0; i < d.num_elements; i++) {
    const int e = detail::element(i, lane, M * N), r = e / N, col = e % N;
    float acc = buf[2][e];
    for (int k = 0; k < K; k++) acc = static_cast<float>(static_cast<double>(acc) + static_cast<double>(buf[0][r * K + k]) * buf[1][k * N + col]);
    out[i] = acc;
  }
  span_emu_rt->warp(SPAN_EMU_WMMA_MMA, 0xffffffffu, 0, 0, 32);
  for (int i = 0; i < d.num_elements; i++) d.x[i] = out[i];
}

}  // namespace wmma
}  // namespace nvcuda

#endif
