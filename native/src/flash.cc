// FlashAttention-2 on the CPU (see flash.h): Dao 2023, Algorithm 1 (forward) and Algorithm 2
// (backward), one pool task per (batch entry, head[, query block]), products through gemm_ld so
// the matrix-product precision (gemm.h, fp32 or bf16) applies to every block product. The
// scores, mask, dropout and softmax conventions are attention_forward's (fused.cc), so the two
// kernels give the same results up to float rounding order.
#include "flash.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gemm.h"
#include "mathfn.h"
#include "pool.h"

namespace span {
namespace {

constexpr size_t BQ = kFlashBlockQ, BK = kFlashBlockK;

/** Where one head's [T, d] slice of a [B, T, A·d] tensor starts, and the dropout index of its (0, 0). */
struct Head {
  size_t off;    // element offset of (b, 0, h·d)
  size_t first;  // (b·A + h)·T·T: index of P[b, h, 0, 0] in [B, A, T, T]
  const float* mask;
};

Head head_of(size_t i, size_t T, size_t A, size_t d, const float* mask) {
  size_t b = i / A, h = i % A;
  return {b * T * A * d + h * d, i * T * T, mask + b * T};
}

/** Zeroes rows [0, T) of a head's d columns in a [T, ld] matrix. */
void zero_head(float* x, size_t T, size_t d, size_t ld) {
  for (size_t t = 0; t < T; t++) std::memset(x + t * ld, 0, d * sizeof(float));
}

/** Multiplies P (row-major, ld BK) by the dropout mask over 1/keep of the block at (t0, s0). */
void drop_block(float* P, size_t nq, size_t nk, const Head& hd, size_t T, size_t t0, size_t s0, uint64_t base,
                float keep) {
  float inv = 1.0f / keep;
  for (size_t r = 0; r < nq; r++) {
    size_t first = hd.first + (t0 + r) * T + s0;
    float* p = P + r * BK;
    for (size_t j = 0; j < nk; j++) p[j] = dropout_keeps(base, first + j, keep) ? p[j] * inv : 0.0f;
  }
}

/** Running softmax state of one query block: max m and sum l per row. */
struct Online {
  float m[BQ], l[BQ];
};

/**
 * One key block of the forward pass for rows of S [nq, nk] (already Q·Kᵀ): u = S·scale + mask, the
 * new max, the rescaling of l and of the context rows (ctx, ld H) by exp(m_old − m), P = exp(u − m)
 * into S, l += Σ P (before dropout, as softmax normalises P before it is dropped).
 */
void online_block(float* S, size_t nq, size_t nk, const float* mask, float scale, Online& st, float* ctx, size_t H,
                  size_t d) {
  for (size_t r = 0; r < nq; r++) {
    float* u = S + r * BK;
    float mt = st.m[r];
    for (size_t j = 0; j < nk; j++) {
      u[j] = u[j] * scale + mask[j];
      mt = u[j] > mt ? u[j] : mt;
    }
    bool none = mt == -INFINITY;  // every key so far −∞: P = 0, nothing to rescale (never exp(−∞ + ∞))
    float corr = none ? 1.0f : fast_exp(st.m[r] - mt), sum = 0;
    for (size_t j = 0; j < nk; j++) {
      u[j] = none ? 0.0f : fast_exp(u[j] - mt);
      sum += u[j];
    }
    st.l[r] = st.l[r] * corr + sum;
    st.m[r] = mt;
    if (corr != 1.0f)
      for (size_t c = 0; c < d; c++) ctx[r * H + c] *= corr;
  }
}

/** Forward of one query block [t0, t0 + nq) of one head: Algorithm 1's inner loop over key blocks. */
void forward_block(const float* q, const float* k, const float* v, float* lse, float* ctx, const Head& hd, size_t t0,
                   size_t nq, size_t T, size_t H, size_t d, float scale, float keep, uint64_t base, float* S) {
  Online st;
  std::fill(st.m, st.m + BQ, -INFINITY);
  std::fill(st.l, st.l + BQ, 0.0f);
  float* o = ctx + hd.off + t0 * H;  // [nq, d] at ld H: the unnormalised context
  zero_head(o, nq, d, H);
  for (size_t s0 = 0; s0 < T; s0 += BK) {
    size_t nk = std::min(BK, T - s0);
    gemm_ld(false, true, nq, nk, d, q + hd.off + t0 * H, H, k + hd.off + s0 * H, H, S, BK);  // Q_i·K_jᵀ [nq, nk]
    online_block(S, nq, nk, hd.mask + s0, scale, st, o, H, d);
    if (keep < 1.0f) drop_block(S, nq, nk, hd, T, t0, s0, base, keep);
    gemm_ld(false, false, nq, d, nk, S, BK, v + hd.off + s0 * H, H, o, H, 1.0f);  // O += P̃_ij·V_j [nq, d]
  }
  for (size_t r = 0; r < nq; r++) {  // ctx = O / l, lse = m + log l
    float inv = st.l[r] > 0.0f ? 1.0f / st.l[r] : 0.0f;
    for (size_t c = 0; c < d; c++) o[r * H + c] *= inv;
    lse[t0 + r] = st.l[r] > 0.0f ? st.m[r] + std::log(st.l[r]) : st.m[r];
  }
}

}  // namespace

void flash_attention_forward(const float* q, const float* k, const float* v, const float* mask, float* lse, float* ctx,
                             size_t B, size_t T, size_t A, size_t d, float scale, float keep, uint64_t seed) {
  size_t H = A * d, blocks = (T + BQ - 1) / BQ;
  uint64_t base = splitmix(seed);
  parallel_for(B * A * blocks, 1, [&](size_t i0, size_t i1) {
    std::vector<float> S(BQ * BK);  // one block's scores, then probabilities [BQ, BK]
    for (size_t i = i0; i < i1; i++) {
      size_t bh = i / blocks, t0 = (i % blocks) * BQ;
      Head hd = head_of(bh, T, A, d, mask);
      forward_block(q, k, v, lse + bh * T, ctx, hd, t0, std::min(BQ, T - t0), T, H, d, scale, keep, base, S.data());
    }
  });
}

namespace {

/** The tensors of one head's backward pass, and its per-row D = rowsum(dctx ⊙ ctx). */
struct Grad {
  const float *dctx, *q, *k, *v, *lse;
  float *dq, *dk, *dv;
  const float* D;
};

/** P = exp(S·scale + mask − lse) in place over a block (lse −∞: the row's P is 0). */
void recompute_p(float* S, size_t nq, size_t nk, const float* mask, const float* lse, float scale) {
  for (size_t r = 0; r < nq; r++) {
    float* u = S + r * BK;
    float l = lse[r];
    for (size_t j = 0; j < nk; j++) u[j] = l == -INFINITY ? 0.0f : fast_exp(u[j] * scale + mask[j] - l);
  }
}

/** dS = P ⊙ (dP − D)·scale into G (dP = dPd through the dropout mask, already applied to G). */
void softmax_grad(const float* P, float* G, size_t nq, size_t nk, const float* D, float scale) {
  for (size_t r = 0; r < nq; r++) {
    const float* p = P + r * BK;
    float* g = G + r * BK;
    for (size_t j = 0; j < nk; j++) g[j] = p[j] * (g[j] - D[r]) * scale;
  }
}

/** Algorithm 2's inner step for query block t0 and key block s0 of one head: dV_j, dQ_i and dK_j accumulate. */
void backward_block(const Grad& g, const Head& hd, size_t t0, size_t nq, size_t s0, size_t nk, size_t T, size_t H,
                    size_t d, float scale, float keep, uint64_t base, float* S, float* G) {
  size_t qo = hd.off + t0 * H, ko = hd.off + s0 * H;
  gemm_ld(false, true, nq, nk, d, g.q + qo, H, g.k + ko, H, S, BK);  // S = Q_i·K_jᵀ [nq, nk]
  recompute_p(S, nq, nk, hd.mask + s0, g.lse + t0, scale);
  const float* Pd = S;
  if (keep < 1.0f) {
    for (size_t r = 0; r < nq; r++) std::memcpy(G + r * BK, S + r * BK, nk * sizeof(float));
    drop_block(G, nq, nk, hd, T, t0, s0, base, keep);
    Pd = G;
  }
  gemm_ld(true, false, nk, d, nq, Pd, BK, g.dctx + qo, H, g.dv + ko, H, 1.0f);  // dV_j += Pdᵀ·dO_i [nk, d]
  gemm_ld(false, true, nq, nk, d, g.dctx + qo, H, g.v + ko, H, G, BK);          // dPd = dO_i·V_jᵀ [nq, nk]
  if (keep < 1.0f) drop_block(G, nq, nk, hd, T, t0, s0, base, keep);            // through the same mask
  softmax_grad(S, G, nq, nk, g.D + t0, scale);
  gemm_ld(false, false, nq, d, nk, G, BK, g.k + ko, H, g.dq + qo, H, 1.0f);  // dQ_i += dS·K_j [nq, d]
  gemm_ld(true, false, nk, d, nq, G, BK, g.q + qo, H, g.dk + ko, H, 1.0f);   // dK_j += dSᵀ·Q_i [nk, d]
}

/** D[t] = Σ_c dctx[t, c]·ctx[t, c] over one head's rows, in double. */
void row_dots(const float* dctx, const float* ctx, size_t T, size_t H, size_t d, float* D) {
  for (size_t t = 0; t < T; t++) {
    double s = 0;
    for (size_t c = 0; c < d; c++) s += static_cast<double>(dctx[t * H + c]) * ctx[t * H + c];
    D[t] = static_cast<float>(s);
  }
}

}  // namespace

void flash_attention_backward(const float* dctx, const float* q, const float* k, const float* v, const float* mask,
                              const float* ctx, const float* lse, float* dq, float* dk, float* dv, size_t B, size_t T,
                              size_t A, size_t d, float scale, float keep, uint64_t seed) {
  size_t H = A * d;
  uint64_t base = splitmix(seed);
  parallel_for(B * A, 1, [&](size_t i0, size_t i1) {
    std::vector<float> S(BQ * BK), G(BQ * BK), D(T);
    for (size_t i = i0; i < i1; i++) {
      Head hd = head_of(i, T, A, d, mask);
      for (float* x : {dq, dk, dv}) zero_head(x + hd.off, T, d, H);
      row_dots(dctx + hd.off, ctx + hd.off, T, H, d, D.data());
      Grad g{dctx, q, k, v, lse + i * T, dq, dk, dv, D.data()};
      for (size_t s0 = 0; s0 < T; s0 += BK)
        for (size_t t0 = 0; t0 < T; t0 += BQ)
          backward_block(g, hd, t0, std::min(BQ, T - t0), s0, std::min(BK, T - s0), T, H, d, scale, keep, base,
                         S.data(), G.data());
    }
  });
}

}  // namespace span
