// BertSelfOutput / BertOutput after their dense layer as one native call each way (issue 32 item 3):
// LayerNorm(dropout(x·Wᵀ + b) + residual), the chain the composite SpanResidualLayerNorm runs as four
// kernels (linear, dropout, add, LayerNorm) and its gradient as three, here with the same arithmetic in
// the same order (so the results are the chain's bit for bit) and without the chain's intermediates.
#pragma once
#include <cstddef>
#include <cstdint>

namespace span {

/**
 * x [N, in], W [H, in], b [H], residual [N, H], LayerNorm gain g and bias beta [H] → y [N, H]; s [N, H]
 * receives the LayerNorm input dropout(z) + residual, mean and rstd [N] its statistics (kept for the
 * gradient). keep = 1 − rate (1: no dropout), the mask drawn from (seed, index into [N, H]) as ops.h dropout.
 */
void residual_layer_norm_forward(const float* x, const float* w, const float* b, const float* residual, const float* g,
                                 const float* beta, float* s, float* y, float* mean, float* rstd, size_t N, size_t in,
                                 size_t H, float eps, float keep, uint64_t seed);

/**
 * Its gradient from dy [N, H] and the saved x, W, g, s, mean, rstd: ds = dresidual [N, H], dg, dbeta [H];
 * dz = dropout(ds) (the same mask) into the scratch dz [N, H]; dx [N, in], dW [H, in], db [H].
 */
void residual_layer_norm_backward(const float* dy, const float* x, const float* w, const float* g, const float* s,
                                  const float* mean, const float* rstd, float* ds, float* dz, float* dx, float* dw,
                                  float* db, float* dg, float* dbeta, size_t N, size_t in, size_t H, float keep,
                                  uint64_t seed);

}  // namespace span
