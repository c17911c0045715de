// The emulation prelude: what makes CUDA C (the text NVRTC compiles on a GPU) compile with the
// host g++ into a module of the CUDA-C emulator. The NVRTC stand-in includes it before every
// program (-include). It maps the CUDA keywords, builtin variables, intrinsics, atomics and
// math functions span's kernels use onto the emulator runtime (emu.h). Test-only code.
//
// Deliberately like NVRTC: INFINITY and NAN are undefined (NVRTC has no math.h macros), so a
// kernel that uses them fails here as it would there.
#ifndef SPAN_EMU_PRELUDE_H
#define SPAN_EMU_PRELUDE_H

#include <assert.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <type_traits>
#include <utility>

#include "emu.h"

#undef INFINITY
#undef NAN
#undef assert

#ifndef __CUDA_ARCH__
#define __CUDA_ARCH__ 800
#endif
#define __CUDACC__ 1
#define __CUDACC_RTC__ 1
#define SPAN_CUDA_EMULATOR 1

// ---- keywords ----
#define __global__ __attribute__((used))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
// one copy per kernel (blocks run one after another), in a section the runtime fills with 0xff
// bytes before every block, so that a read of shared memory this block did not write shows
#define __shared__ static __attribute__((section("span_emu_shared")))
#define __constant__
#define __managed__
#define __grid_constant__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

// ---- the runtime a module is bound to at load ----
static const SpanEmuRt* span_emu_rt;
static SpanEmuThread* const* span_emu_thread;
static SpanEmuBlock* const* span_emu_block;

extern "C" __attribute__((visibility("default"))) int span_emu_module_init(const SpanEmuRt* rt) {
  if (!rt || rt->abi != SPAN_EMU_ABI) return 1;
  span_emu_rt = rt;
  span_emu_thread = rt->thread;
  span_emu_block = rt->block;
  return 0;
}

extern "C" char __start_span_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_span_emu_shared[] __attribute__((weak, visibility("hidden")));
extern "C" __attribute__((visibility("default"))) void span_emu_shared_range(char** begin, char** end) {
  *begin = __start_span_emu_shared;
  *end = __stop_span_emu_shared;
}

// ---- vector types and builtin variables ----
struct uint3 {
  unsigned int x, y, z;
};
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
};
#define SPAN_EMU_VEC2(T, N, A) \
  struct __align__(A) N { T x, y; }; \
  static inline N make_##N(T x, T y) { return N{x, y}; }
#define SPAN_EMU_VEC4(T, N, A) \
  struct __align__(A) N { T x, y, z, w; }; \
  static inline N make_##N(T x, T y, T z, T w) { return N{x, y, z, w}; }
SPAN_EMU_VEC2(float, float2, 8)
SPAN_EMU_VEC4(float, float4, 16)
SPAN_EMU_VEC2(int, int2, 8)
SPAN_EMU_VEC4(int, int4, 16)
SPAN_EMU_VEC2(unsigned int, uint2, 8)
SPAN_EMU_VEC4(unsigned int, uint4, 16)
SPAN_EMU_VEC2(double, double2, 16)
SPAN_EMU_VEC2(unsigned short, ushort2, 4)
struct float3 {
  float x, y, z;
};
struct int3 {
  int x, y, z;
};
static inline float3 make_float3(float x, float y, float z) { return float3{x, y, z}; }
static inline uint3 make_uint3(unsigned x, unsigned y, unsigned z) { return uint3{x, y, z}; }

#define threadIdx (reinterpret_cast<const uint3&>((*span_emu_thread)->threadIdx))
#define blockIdx (reinterpret_cast<const uint3&>((*span_emu_block)->blockIdx))
#define blockDim (reinterpret_cast<const dim3&>((*span_emu_block)->blockDim))
#define gridDim (reinterpret_cast<const dim3&>((*span_emu_block)->gridDim))
static const int warpSize = 32;

/** extern __shared__ T name[] becomes T* const name = (T*)span_emu_dynamic_smem() (the NVRTC stand-in rewrites it). */
static inline char* span_emu_dynamic_smem() { return (*span_emu_block)->dynSmem; }

// ---- barriers, warp intrinsics ----
static inline void __syncthreads() { span_emu_rt->barrier(SPAN_EMU_SYNC, 0); }
static inline int __syncthreads_count(int p) { return span_emu_rt->barrier(SPAN_EMU_SYNC_COUNT, p); }
static inline int __syncthreads_and(int p) { return span_emu_rt->barrier(SPAN_EMU_SYNC_AND, p); }
static inline int __syncthreads_or(int p) { return span_emu_rt->barrier(SPAN_EMU_SYNC_OR, p); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { span_emu_rt->warp(SPAN_EMU_SYNCWARP, mask, 0, 0, 32); }
static inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline unsigned __activemask() { return span_emu_rt->activemask(); }
[[noreturn]] static inline void __trap() {
  span_emu_rt->trap("__trap()");
  __builtin_unreachable();
}
#define SPAN_EMU_STR2(x) #x
#define SPAN_EMU_STR(x) SPAN_EMU_STR2(x)
#define assert(e) ((e) ? (void)0 : span_emu_rt->trap(__FILE__ ":" SPAN_EMU_STR(__LINE__) ": assertion failed: " #e))

template <class T>
static inline T span_emu_shfl(int op, unsigned mask, T v, int arg, int width) {
  static_assert(sizeof(T) <= 8, "a shuffled value has at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &v, sizeof(T));
  bits = span_emu_rt->warp(op, mask, bits, arg, width);
  T out;
  memcpy(&out, &bits, sizeof(T));
  return out;
}
template <class T>
static inline T __shfl_sync(unsigned mask, T v, int srcLane, int width = 32) {
  return span_emu_shfl(SPAN_EMU_SHFL_IDX, mask, v, srcLane, width);
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return span_emu_shfl(SPAN_EMU_SHFL_UP, mask, v, static_cast<int>(delta), width);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return span_emu_shfl(SPAN_EMU_SHFL_DOWN, mask, v, static_cast<int>(delta), width);
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T v, int laneMask, int width = 32) {
  return span_emu_shfl(SPAN_EMU_SHFL_XOR, mask, v, laneMask, width);
}
static inline unsigned __ballot_sync(unsigned mask, int p) { return static_cast<unsigned>(span_emu_rt->warp(SPAN_EMU_BALLOT, mask, p != 0, 0, 32)); }
static inline int __any_sync(unsigned mask, int p) { return static_cast<int>(span_emu_rt->warp(SPAN_EMU_ANY, mask, p != 0, 0, 32)); }
static inline int __all_sync(unsigned mask, int p) { return static_cast<int>(span_emu_rt->warp(SPAN_EMU_ALL, mask, p != 0, 0, 32)); }
static inline unsigned __reduce_add_sync(unsigned mask, unsigned v) { return static_cast<unsigned>(span_emu_rt->warp(SPAN_EMU_REDUCE_ADD, mask, v, 0, 32)); }
static inline unsigned __reduce_min_sync(unsigned mask, unsigned v) { return static_cast<unsigned>(span_emu_rt->warp(SPAN_EMU_REDUCE_MIN, mask, v, 0, 32)); }
static inline unsigned __reduce_max_sync(unsigned mask, unsigned v) { return static_cast<unsigned>(span_emu_rt->warp(SPAN_EMU_REDUCE_MAX, mask, v, 0, 32)); }
static inline int __reduce_min_sync(unsigned mask, int v) { return static_cast<int>(span_emu_rt->warp(SPAN_EMU_REDUCE_MIN, mask, static_cast<uint32_t>(v), 1, 32)); }
static inline int __reduce_max_sync(unsigned mask, int v) { return static_cast<int>(span_emu_rt->warp(SPAN_EMU_REDUCE_MAX, mask, static_cast<uint32_t>(v), 1, 32)); }

// ---- atomics: blocks and threads run on one host thread and switch only at barriers and
// warp intrinsics, so a read-modify-write here is never interleaved ----
#define SPAN_EMU_ATOMIC(name, expr)              \
  template <class T, class U>                    \
  static inline T name(T* p, U v) {              \
    T old = *p;                                  \
    *p = static_cast<T>(expr);                   \
    return old;                                  \
  }                                              \
  template <class T, class U>                    \
  static inline T name##_block(T* p, U v) {      \
    return name(p, v);                           \
  }                                              \
  template <class T, class U>                    \
  static inline T name##_system(T* p, U v) {     \
    return name(p, v);                           \
  }
SPAN_EMU_ATOMIC(atomicAdd, old + static_cast<T>(v))
SPAN_EMU_ATOMIC(atomicSub, old - static_cast<T>(v))
SPAN_EMU_ATOMIC(atomicExch, v)
SPAN_EMU_ATOMIC(atomicMin, static_cast<T>(v) < old ? static_cast<T>(v) : old)
SPAN_EMU_ATOMIC(atomicMax, static_cast<T>(v) > old ? static_cast<T>(v) : old)
SPAN_EMU_ATOMIC(atomicAnd, old & static_cast<T>(v))
SPAN_EMU_ATOMIC(atomicOr, old | static_cast<T>(v))
SPAN_EMU_ATOMIC(atomicXor, old ^ static_cast<T>(v))
SPAN_EMU_ATOMIC(atomicInc, old >= static_cast<T>(v) ? 0 : old + 1)
SPAN_EMU_ATOMIC(atomicDec, (old == 0 || old > static_cast<T>(v)) ? static_cast<T>(v) : old - 1)
template <class T, class U, class V>
static inline T atomicCAS(T* p, U compare, V v) {
  T old = *p;
  if (old == static_cast<T>(compare)) *p = static_cast<T>(v);
  return old;
}

// ---- loads and stores with cache hints: plain accesses here ----
template <class T>
static inline T __ldg(const T* p) { return *p; }
template <class T>
static inline T __ldcs(const T* p) { return *p; }
template <class T>
static inline T __ldcg(const T* p) { return *p; }
template <class T>
static inline T __ldlu(const T* p) { return *p; }
template <class T>
static inline void __stcs(T* p, T v) { *p = v; }
template <class T>
static inline void __stcg(T* p, T v) { *p = v; }
template <class T>
static inline void __stwt(T* p, T v) { *p = v; }

// ---- integer and bit intrinsics ----
static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __clz(int x) { return x ? __builtin_clz(static_cast<unsigned>(x)) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll(static_cast<unsigned long long>(x)) : 64; }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; i++) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
static inline int __mul24(int a, int b) { return (a << 8 >> 8) * (b << 8 >> 8); }
static inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffff) * (b & 0xffffff); }
static inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32); }
static inline long long clock64() {
  static long long t = 0;
  return t += 1000;
}
static inline int clock() { return static_cast<int>(clock64()); }
static inline void __nanosleep(unsigned) {}

// ---- bit casts and conversions ----
template <class To, class From>
static inline To span_emu_bits(From f) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  memcpy(&t, &f, sizeof t);
  return t;
}
static inline int __float_as_int(float f) { return span_emu_bits<int>(f); }
static inline unsigned __float_as_uint(float f) { return span_emu_bits<unsigned>(f); }
static inline float __int_as_float(int i) { return span_emu_bits<float>(i); }
static inline float __uint_as_float(unsigned i) { return span_emu_bits<float>(i); }
static inline long long __double_as_longlong(double d) { return span_emu_bits<long long>(d); }
static inline double __longlong_as_double(long long i) { return span_emu_bits<double>(i); }
static inline int __float2int_rn(float f) { return static_cast<int>(nearbyintf(f)); }
static inline int __float2int_rz(float f) { return static_cast<int>(f); }
static inline int __float2int_rd(float f) { return static_cast<int>(floorf(f)); }
static inline int __float2int_ru(float f) { return static_cast<int>(ceilf(f)); }
static inline unsigned __float2uint_rn(float f) { return static_cast<unsigned>(nearbyintf(f)); }
static inline float __int2float_rn(int i) { return static_cast<float>(i); }
static inline float __uint2float_rn(unsigned i) { return static_cast<float>(i); }

// ---- math: the C library's, and CUDA's extra names (the fast __ forms are the exact ones here) ----
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline float span_emu_expf(float x) { return expf(x); }
static inline float span_emu_exp10f(float x) { return powf(10.0f, x); }
static inline float span_emu_logf(float x) { return logf(x); }
static inline float span_emu_log2f(float x) { return log2f(x); }
static inline float span_emu_log10f(float x) { return log10f(x); }
static inline float span_emu_sinf(float x) { return sinf(x); }
static inline float span_emu_cosf(float x) { return cosf(x); }
static inline float span_emu_tanf(float x) { return tanf(x); }
static inline float span_emu_powf(float x, float y) { return powf(x, y); }
#define __expf span_emu_expf  // glibc declares these names: macros, not overloads
#define __exp10f span_emu_exp10f
#define __logf span_emu_logf
#define __log2f span_emu_log2f
#define __log10f span_emu_log10f
#define __sinf span_emu_sinf
#define __cosf span_emu_cosf
#define __tanf span_emu_tanf
#define __powf span_emu_powf
#define __sincosf span_emu_sincosf
static inline float __fdividef(float x, float y) { return x / y; }
static inline float fdividef(float x, float y) { return x / y; }
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmaf_rn(float a, float b, float c) { return fmaf(a, b, c); }
static inline float __saturatef(float x) { return x != x ? 0.0f : x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline void span_emu_sincosf(float x, float* s, float* c) { *s = sinf(x), *c = cosf(x); }

#define SPAN_EMU_MINMAX(T)                                        \
  static inline T min(T a, T b) { return b < a ? b : a; }         \
  static inline T max(T a, T b) { return a < b ? b : a; }
SPAN_EMU_MINMAX(int)
SPAN_EMU_MINMAX(unsigned int)
SPAN_EMU_MINMAX(long long)
SPAN_EMU_MINMAX(unsigned long long)
SPAN_EMU_MINMAX(long)
SPAN_EMU_MINMAX(unsigned long)
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline unsigned min(int a, unsigned b) { return min(static_cast<unsigned>(a), b); }
static inline unsigned min(unsigned a, int b) { return min(a, static_cast<unsigned>(b)); }
static inline unsigned max(int a, unsigned b) { return max(static_cast<unsigned>(a), b); }
static inline unsigned max(unsigned a, int b) { return max(a, static_cast<unsigned>(b)); }

// ---- the kernel table: cuLaunchKernel's void** params unpacked into each kernel's own types ----
namespace span_emu_detail {
template <class F>
struct Sig;
template <class... A>
struct Sig<void (*)(A...)> {
  static constexpr unsigned count = sizeof...(A);
  static constexpr SpanEmuParam params[sizeof...(A) + 1] = {{static_cast<unsigned>(sizeof(A)), std::is_pointer<A>::value ? 1u : 0u}..., {0, 0}};
  template <void (*K)(A...), size_t... I>
  static void unpack(void** p, std::index_sequence<I...>) {
    K(*static_cast<std::remove_cv_t<A>*>(p[I])...);
  }
  template <void (*K)(A...)>
  static void call(void** p) {
    unpack<K>(p, std::index_sequence_for<A...>{});
  }
};
}  // namespace span_emu_detail
#define SPAN_EMU_KERNEL(k) {#k, &span_emu_detail::Sig<decltype(&k)>::template call<&k>, span_emu_detail::Sig<decltype(&k)>::count, span_emu_detail::Sig<decltype(&k)>::params},

#endif
