// The machine's arithmetic peak, measured on one core (bench/gemm.mjs, doctor's GEMM line).
#pragma once

namespace span {

struct Peak {
  double ghz;                // the core clock: a timed chain of dependent integer adds (1 cycle each)
  double fma_latency;        // cycles per dependent vector FMA (4 on Zen 4/5, Skylake-X)
  double fp32_per_cycle;     // fp32 FLOP per cycle per core: independent FMAs, 2 FLOP per lane
  double bf16_per_cycle;     // the same for vdpbf16ps (2 products per 32-bit lane, 2 FLOP each); 0 without avx512_bf16
  int vector_bits;           // 512 (AVX-512) or 256 (AVX2) or 0 (neither: no figures)
};

/** GFLOP/s the pool's threads sustain together (fp32 FMAs, bf16 dot products; 0 where the CPU has none), by wall clock. */
struct PeakAll {
  double fp32;
  double bf16;
  int threads;
};

/**
 * The same loops as measure_peak on every thread of the pool at once, timed by the wall clock (best of
 * 5, about 0.1 s): the machine's peak as its cores sustain it together now, at the clock they run at
 * together (bench/gemm.mjs measures it beside each timing: a shared or turbo-boosted CPU's clock moves).
 */
PeakAll measure_peak_all();

/** Measures the clock and the FMA / bf16 dot-product throughput on the calling thread (about 0.3 s). */
Peak measure_peak();

}  // namespace span
