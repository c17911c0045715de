// Matrix products on oneDNN's matmul primitive (when detect-dnnl.mjs found oneDNN at build time).
#pragma once
#include <cstddef>

namespace span {

/**
 * C[i] (+)= op(A[i]) · op(B[i]) for i in [0, batch), row-major with leading dimensions, on the
 * calling thread (oneDNN single-threaded inside: the addon's pool splits the work). fp32 operands,
 * or bf16 ones (uint16 bits, see bf16.h) with fp32 accumulation and output. A batch stride of 0
 * broadcasts that operand.
 */
struct DnnlProduct {
  const void* a;
  const void* b;
  float* c;
  size_t batch, M, N, K;  // batch, M, N, K >= 1
  bool transA, transB, bf16;
  float beta;  // 0: C = op(A)·op(B); 1: C += op(A)·op(B) (a sum post-op)
  size_t lda, ldb, ldc;
  size_t strideA, strideB, strideC;  // elements between batch entries
};

/** Whether oneDNN was linked in and its CPU engine started. */
bool dnnl_ready();
/** Runs p; false (nothing written) when oneDNN has no primitive for it, and the caller falls back. */
bool dnnl_matmul(const DnnlProduct& p);
/** "2.6.3", or "" without oneDNN. */
const char* dnnl_version_name();
/** The ISA oneDNN dispatches to on this CPU (dnnl_get_effective_cpu_isa): "avx512_core_bf16", ... */
const char* dnnl_isa_name();
/** The implementation oneDNN picks for a 256³ product: "brg:avx512_core_bf16", ...; "" when none. */
const char* dnnl_impl_name(bool bf16);

}  // namespace span
