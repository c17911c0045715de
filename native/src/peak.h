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

/** Measures the clock and the FMA / bf16 dot-product throughput on the calling thread (about 0.3 s). */
Peak measure_peak();

}  // namespace span
