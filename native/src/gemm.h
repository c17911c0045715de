#pragma once
#include <cstddef>

namespace span {

/** Name of the BLAS the addon was linked with ("openblas (core)", "blis", "accelerate", "cblas") or "builtin". */
const char* blas_name();
/**
 * The matrix products' precision (`--precision` on native): fp32, or bf16: every operand rounded to
 * bf16 (round to nearest, ties to even, NaN kept: the cuda backend's cast_bf16.cu and its CPU reference
 * src/core/engine/cuda/bf16.ts) before an fp32-accumulating product; outputs stay fp32. Process-wide.
 */
enum class Precision { fp32 = 0, bf16 = 1 };
void set_gemm_precision(Precision p);
Precision gemm_precision();
/** x rounded to the nearest bf16, returned as the fp32 it stands for. */
float round_bf16(float x);

/**
 * Where the products run: oneDNN's matmul primitives (when linked), span's own AVX-512 kernel
 * (gemm_span.cc; where the CPU has AVX-512F, and for bf16 avx512_bf16, else oneDNN's bf16), the BLAS'
 * sgemm (when linked), or the builtin kernel. The default is the first available, in that order
 * (bench/gemm-paths-step.mjs: a training step; bench/gemm.mjs: each product); setGemmPath and
 * SPAN_GEMM_PATH change it.
 */
enum class GemmPath { builtin = 0, blas = 1, onednn = 2, avx512 = 3 };
/** false (nothing changed) when that path is not in this build. */
bool set_gemm_path(GemmPath p);
GemmPath gemm_path();
/** How many products (or parts) on the oneDNN path ran on the BLAS or builtin kernel instead: oneDNN had no primitive. */
size_t gemm_fallbacks();
const char* gemm_path_name(GemmPath p);
/** The path in use, as doctor says it: "onednn 2.6.3 (avx512_core_bf16)", "openblas (Haswell)", "builtin". */
const char* gemm_description();
/** The instruction set the path runs: oneDNN's dispatch ("avx512_core_bf16"), OpenBLAS' core ("Haswell"), or what the builtin kernel was compiled for. */
const char* gemm_isa();

/** Pins the BLAS library to one thread, so the addon's own pool is the only one. */
void blas_single_thread();

/**
 * C[b] = op(A[b]) · op(B[b]) for b in [0, batch), row-major, as tfjs' BatchMatMul computes it
 * (tfjs-backend-cpu batchMatMul). A is [batchA, M, K] (or [batchA, K, M] when transA), B is
 * [batchB, K, N] (or [batchB, N, K] when transB); batchA and batchB are either equal to batch
 * or 1 (broadcast). beta 1 accumulates into C instead of overwriting it (0 and 1 only).
 */
void batch_matmul(const float* a, const float* b, float* c, size_t batchA, size_t batchB, size_t M, size_t N,
                  size_t K, bool transA, bool transB, float beta = 0.0f);

/**
 * One product on the calling thread, with explicit leading dimensions (row-major): C = op(A)·op(B),
 * or C += op(A)·op(B) when beta is 1. For kernels that run their own loop over the pool.
 */
void gemm_ld(bool transA, bool transB, size_t M, size_t N, size_t K, const float* a, size_t lda, const float* b,
             size_t ldb, float* c, size_t ldc, float beta = 0.0f);

}  // namespace span
