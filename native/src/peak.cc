// The machine's arithmetic peak per core, measured rather than looked up: the clock from a chain
// of dependent integer adds (one cycle each on every x86-64 core), then the FLOP per cycle that
// independent vector FMAs (vfmadd231ps) and bf16 dot products (vdpbf16ps) sustain, with enough
// accumulators (12) to cover the FMA latency on two pipes. Each timing is the thread's own CPU
// time (CLOCK_THREAD_CPUTIME_ID: time the thread was descheduled on a loaded machine is not
// counted), the best of 5 runs.
#include "peak.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstring>

#include "bf16.h"
#include "pool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SPAN_X86 1
#endif

namespace span {
namespace {

constexpr long kIters = 4000000;

double best_seconds(void (*f)()) {
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    timespec t0, t1;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    f();
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    best = std::min(best, (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec));
  }
  return best;
}

#ifdef SPAN_X86
/** 16 dependent adds per iteration: 16 cycles (the loop's own compare-and-branch runs beside them). */
void add_chain() {
  unsigned long x = 0;
  for (long i = 0; i < kIters; i++)
    __asm__ volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(x));
}

volatile float g_sink;

/** 8 dependent FMAs per iteration on one register. */
__attribute__((target("avx2,fma"))) void fma_chain() {
  __m256 acc = _mm256_set1_ps(1.0f), x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
  for (long i = 0; i < kIters; i++)
    for (int j = 0; j < 8; j++) acc = _mm256_fmadd_ps(acc, x, y);
  g_sink = _mm256_cvtss_f32(acc);
}

/** 12 independent 512-bit FMA chains (16 lanes each). */
__attribute__((target("avx512f"))) void fma512_tput() {
  __m512 acc[12], x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  for (auto& a : acc) a = _mm512_set1_ps(1.0f);
  for (long i = 0; i < kIters; i++)
    for (auto& a : acc) a = _mm512_fmadd_ps(a, x, y);
  float s = 0;
  for (auto& a : acc) s += _mm512_reduce_add_ps(a);
  g_sink = s;
}

/** 12 independent 256-bit FMA chains (8 lanes each). */
__attribute__((target("avx2,fma"))) void fma256_tput() {
  __m256 acc[12], x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
  for (auto& a : acc) a = _mm256_set1_ps(1.0f);
  for (long i = 0; i < kIters; i++)
    for (auto& a : acc) a = _mm256_fmadd_ps(a, x, y);
  float s = 0;
  for (auto& a : acc) s += _mm256_cvtss_f32(a);
  g_sink = s;
}

/** 16 independent vdpbf16ps chains (512-bit: 32 bf16 products each; a longer latency than the FMA's). */
__attribute__((target("avx512f,avx512bf16"))) void dpbf16_tput() {
  __m512 acc[16];
  for (auto& a : acc) a = _mm512_set1_ps(0.0f);
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3a83);  // 1.0, ~0.001
  for (long i = 0; i < kIters; i++)
    for (auto& a : acc) a = _mm512_dpbf16_ps(a, x, y);
  float s = 0;
  for (auto& a : acc) s += _mm512_reduce_add_ps(a);
  g_sink = s;
}
#endif

/** Best wall seconds of f run on every thread of the pool at once (the machine's cores loaded together). */
double best_wall_all(void (*f)()) {
  double best = 1e30;
  for (int r = 0; r < 5; r++) {
    const auto t0 = std::chrono::steady_clock::now();
    run_on_every_thread([&](int) { f(); });  // each thread once, all at once (parallel_for may run chunks on one thread)
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

PeakAll measure_peak_all() {
  PeakAll p{0, 0, get_threads()};
#ifdef SPAN_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return p;
  const double n = 12.0 * kIters * p.threads;
  if (__builtin_cpu_supports("avx512f")) p.fp32 = n * 32 / best_wall_all(fma512_tput) / 1e9;
  else p.fp32 = n * 16 / best_wall_all(fma256_tput) / 1e9;
  if (std::strcmp(to_bf16_isa(), "avx512_bf16") == 0) p.bf16 = 16.0 * kIters * p.threads * 64 / best_wall_all(dpbf16_tput) / 1e9;
#endif
  return p;
}

Peak measure_peak() {
  Peak p{0, 0, 0, 0, 0};
#ifdef SPAN_X86
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return p;
  p.ghz = 16.0 * kIters / best_seconds(add_chain) / 1e9;
  p.fma_latency = best_seconds(fma_chain) * p.ghz * 1e9 / (8.0 * kIters);
  const double n = 12.0 * kIters;
  if (__builtin_cpu_supports("avx512f")) {
    p.vector_bits = 512;
    p.fp32_per_cycle = n * 32 / (best_seconds(fma512_tput) * p.ghz * 1e9);
  } else {
    p.vector_bits = 256;
    p.fp32_per_cycle = n * 16 / (best_seconds(fma256_tput) * p.ghz * 1e9);
  }
  if (std::strcmp(to_bf16_isa(), "avx512_bf16") == 0) p.bf16_per_cycle = 16.0 * kIters * 64 / (best_seconds(dpbf16_tput) * p.ghz * 1e9);
#endif
  return p;
}

}  // namespace span
