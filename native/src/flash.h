// Multi-head self-attention without the [B, A, T, T] probabilities (issue 32 item 3): the
// FlashAttention-2 algorithm (Dao 2023, "FlashAttention-2: Faster Attention with Better
// Parallelism and Work Partitioning", Algorithm 1 forward, Algorithm 2 backward) on the CPU,
// block by block with gemm_ld products, as the cuda backend's flash_attention_*.cu do on the GPU.
#pragma once
#include <cstddef>
#include <cstdint>

namespace span {

/** Query rows and keys per block (a block's scores are a [kFlashBlockQ, kFlashBlockK] scratch). */
constexpr size_t kFlashBlockQ = 64;
constexpr size_t kFlashBlockK = 64;

/**
 * The same result as attention_forward (fused.h), same arguments except that each row's
 * log-sum-exp lse [B, A, T] of S = Q_h K_hᵀ·scale + mask is kept instead of the probabilities:
 * an online softmax over key blocks (running max and sum, the partial context rescaled by
 * exp(m_old − m_new), one division at the end). The dropout mask on P is drawn from (seed,
 * index into [B, A, T, T]) exactly as attention_forward draws it. A row whose every key is −∞
 * gives ctx 0 and lse −∞.
 */
void flash_attention_forward(const float* q, const float* k, const float* v, const float* mask, float* lse, float* ctx,
                             size_t B, size_t T, size_t A, size_t d, float scale, float keep, uint64_t seed);

/**
 * Its gradient: dq, dk, dv [B, T, A·d] from dctx, the inputs, the forward's ctx and lse. P is
 * recomputed block by block as exp(S − lse); rowsum(dP ⊙ P) is dctx·ctx per row (FlashAttention-2
 * §3.1 D_i, true with dropout too since ctx = (P ⊙ Z)·V); dropout masks redrawn from the seed.
 */
void flash_attention_backward(const float* dctx, const float* q, const float* k, const float* v, const float* mask,
                              const float* ctx, const float* lse, float* dq, float* dk, float* dv, size_t B, size_t T,
                              size_t A, size_t d, float scale, float keep, uint64_t seed);

}  // namespace span
