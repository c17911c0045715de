// span's own AVX-512 matrix products (gemm_span.cc): fp32 FMAs and bf16 dot products (vdpbf16ps).
#pragma once
#include <cstddef>

namespace span {

/** Whether this CPU runs the fp32 kernel (AVX-512F) and the bf16 one (AVX-512 BF16). */
bool span_gemm_fp32_ready();
bool span_gemm_bf16_ready();

/** One product C = op(A)·op(B) (C += ... when beta is 1), row-major with leading dimensions, as gemm.h's gemm_ld. */
struct SpanProduct {
  bool transA, transB;
  size_t M, N, K;
  const float* a;
  size_t lda;
  const float* b;
  size_t ldb;
  float* c;
  size_t ldc;
  float beta;  // 0 or 1
};

/**
 * The product on span's kernel: bf16 rounds every operand as round_bf16 (bf16.h's to_bf16) before
 * products accumulated in fp32 by vdpbf16ps (which flushes bf16 subnormals, as oneDNN's bf16 path).
 * parallel: split over the addon's pool (the caller is not a pool worker); else on the calling thread.
 */
void span_gemm(const SpanProduct& p, bool bf16, bool parallel);

}  // namespace span
