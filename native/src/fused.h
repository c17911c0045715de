// Fused layers for the native backend: each replaces a chain of tfjs kernels (and the chain of
// their gradients) with one forward and one backward pass. src/core/engine/fused.ts wraps them
// as tf.customGrad ops; the composite tfjs formulas they replace stay in src/core/model/layers.ts.
#pragma once
#include <cstddef>
#include <cstdint>

namespace span {

/**
 * nn.Linear, optionally followed by GeLU (erf form): z = x·Wᵀ + b, y = act(z).
 * x [N, in], W [out, in], b [out] or null; z and y [N, out] (the same buffer when !gelu).
 */
void linear_forward(const float* x, const float* w, const float* b, float* z, float* y, size_t N, size_t in,
                    size_t out, bool gelu);

/**
 * Its gradient: dz = dy·act'(z) (into dz, a scratch [N, out]; unused when !gelu), dx = dz·W,
 * dW = dzᵀ·x, db = Σ_rows dz (db may be null).
 */
void linear_backward(const float* dy, const float* x, const float* w, const float* z, float* dz, float* dx, float* dw,
                     float* db, size_t N, size_t in, size_t out, bool gelu);

/** LayerNorm over rows of H (BertLayerNorm, eps inside the root): y, and each row's mean and 1/σ. */
void layer_norm_forward(const float* x, const float* g, const float* b, float* y, float* mean, float* rstd,
                        size_t rows, size_t H, float eps);

/** Its gradient: dx = rstd·(dy·g − mean(dy·g) − x̂·mean(dy·g·x̂)), dg = Σ dy·x̂, db = Σ dy. */
void layer_norm_backward(const float* dy, const float* x, const float* g, const float* mean, const float* rstd,
                         float* dx, float* dg, float* db, size_t rows, size_t H);

/**
 * Σ_n −log softmax(logits[n])[labels[n]] over [N, C] (double accumulation); writes each row's
 * log-sum-exp. Returns NaN for a label outside [0, C).
 */
double cross_entropy_forward(const float* logits, const int32_t* labels, float* lse, size_t N, size_t C);

/** Its gradient for an upstream dy: dlogits = (softmax(logits) − onehot(labels))·dy. */
void cross_entropy_backward(const float* logits, const int32_t* labels, const float* lse, float dy, float* dlogits,
                            size_t N, size_t C);

/**
 * The core of multi-head self-attention (BertSelfAttention after its q/k/v projections), for
 * each batch entry b and head h: S = Q_h K_hᵀ·scale + mask[b] (additive, one value per key),
 * P = softmax(S) over keys, ctx_h = dropout(P)·V_h. q, k, v and ctx are [B, T, A·d] with the
 * heads side by side (as the projections give them, no transposes); mask [B, T]; probs
 * [B, A, T, T] receives P for the backward pass. keep = 1 − dropout rate (1: no dropout); the
 * mask is drawn from (seed, index into probs) as in ops.h dropout, so the backward pass redraws it.
 */
void attention_forward(const float* q, const float* k, const float* v, const float* mask, float* probs, float* ctx,
                       size_t B, size_t T, size_t A, size_t d, float scale, float keep, uint64_t seed);

/** Its gradient: dq, dk, dv [B, T, A·d] from dctx, the inputs and the saved probs. */
void attention_backward(const float* dctx, const float* q, const float* k, const float* v, const float* probs,
                        float* dq, float* dk, float* dv, size_t B, size_t T, size_t A, size_t d, float scale,
                        float keep, uint64_t seed);

/** Σ x² over several arrays at once (the global gradient norm's square), in double. */
double sum_squares(const float* const* xs, const size_t* ns, size_t count);

}  // namespace span
