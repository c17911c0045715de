// Fused layers (see fused.h). Each loop is split over the addon's pool like ops.cc; sums that
// span rows (bias and LayerNorm parameter gradients, the loss) are accumulated per chunk in
// double and added up in chunk order, so results do not depend on thread timing.
#include "fused.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "gemm.h"
#include "mathfn.h"
#include "pool.h"

namespace span {
namespace {

constexpr size_t kGrain = 1 << 15;
constexpr float kInvSqrt2 = 0.70710678118654752f;
constexpr float kInvSqrt2Pi = 0.39894228040143268f;

/** GeLU, erf form (BERT modeling.py gelu): z·½(1 + erf(z/√2)). */
inline float gelu(float z) { return z * 0.5f * (1.0f + fast_erf(z * kInvSqrt2)); }

/** d gelu / dz = ½(1 + erf(z/√2)) + z·φ(z), φ the standard normal density. */
inline float gelu_grad(float z) {
  return 0.5f * (1.0f + fast_erf(z * kInvSqrt2)) + z * kInvSqrt2Pi * fast_exp(-0.5f * z * z);
}

/** Number of row chunks for `rows` rows of `cols` items: at most the pool size, each worth a grain. */
size_t chunk_count(size_t rows, size_t cols) {
  size_t work = std::max<size_t>(1, rows * std::max<size_t>(cols, 1) / kGrain);
  return std::max<size_t>(1, std::min({static_cast<size_t>(get_threads()), work, std::max<size_t>(rows, 1)}));
}

/** Runs fn(chunk, r0, r1) over `chunks` contiguous row ranges of [0, rows), one task per chunk. */
template <class F>
void for_chunks(size_t rows, size_t chunks, F fn) {
  size_t step = (rows + chunks - 1) / chunks;
  parallel_for(chunks, 1, [&](size_t c0, size_t c1) {
    for (size_t c = c0; c < c1; c++) {
      size_t r0 = c * step, r1 = std::min(rows, r0 + step);
      if (r0 < r1) fn(c, r0, r1);
    }
  });
}

/** Largest entry of a row (n ≥ 1), over 16 running maxima so that it vectorises (a single
 *  running maximum is a reduction the compiler keeps scalar). NaN entries are skipped, as
 *  `x > m ? x : m` does. */
float row_max(const float* x, size_t n) {
  float m[16];
  for (size_t k = 0; k < 16; k++) m[k] = x[0];
  size_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (size_t k = 0; k < 16; k++) m[k] = x[j + k] > m[k] ? x[j + k] : m[k];
  float best = m[0];
  for (size_t k = 1; k < 16; k++) best = m[k] > best ? m[k] : best;
  for (; j < n; j++) best = x[j] > best ? x[j] : best;
  return best;
}

/** out[j] = Σ_r a[r, j] over a [rows, cols]: float sums over blocks of 32 rows, added up in double. */
void col_sum(const float* a, size_t rows, size_t cols, float* out) {
  size_t chunks = chunk_count(rows, cols);
  std::vector<double> part(chunks * cols, 0.0);
  for_chunks(rows, chunks, [&](size_t c, size_t r0, size_t r1) {
    double* p = &part[c * cols];
    std::vector<float> block(cols);
    for (size_t b0 = r0; b0 < r1; b0 += 32) {
      std::fill(block.begin(), block.end(), 0.0f);
      for (size_t r = b0; r < std::min(r1, b0 + 32); r++) {
        const float* row = a + r * cols;
        for (size_t j = 0; j < cols; j++) block[j] += row[j];
      }
      for (size_t j = 0; j < cols; j++) p[j] += block[j];
    }
  });
  for (size_t j = 0; j < cols; j++) {
    double s = 0;
    for (size_t c = 0; c < chunks; c++) s += part[c * cols + j];
    out[j] = static_cast<float>(s);
  }
}

}  // namespace

void linear_forward(const float* x, const float* w, const float* b, float* z, float* y, size_t N, size_t in,
                    size_t out, bool act) {
  if (N == 0 || out == 0) return;
  if (b) {
    parallel_for(N, std::max<size_t>(1, kGrain / out), [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; r++) std::memcpy(z + r * out, b, out * sizeof(float));
    });
  }
  batch_matmul(x, w, z, 1, 1, N, out, in, false, true, b ? 1.0f : 0.0f);  // [N, in]·[out, in]ᵀ (+ b)
  if (!act) return;
  parallel_for(N * out, kGrain, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) y[i] = gelu(z[i]);
  });
}

void linear_backward(const float* dy, const float* x, const float* w, const float* z, float* dz, float* dx, float* dw,
                     float* db, size_t N, size_t in, size_t out, bool act) {
  const float* g = dy;  // [N, out]
  if (act) {
    parallel_for(N * out, kGrain, [&](size_t i0, size_t i1) {
      for (size_t i = i0; i < i1; i++) dz[i] = dy[i] * gelu_grad(z[i]);
    });
    g = dz;
  }
  batch_matmul(g, w, dx, 1, 1, N, in, out, false, false);  // [N, out]·[out, in] → [N, in]
  batch_matmul(g, x, dw, 1, 1, out, in, N, true, false);   // [N, out]ᵀ·[N, in] → [out, in]
  if (db) col_sum(g, N, out, db);
}

void layer_norm_forward(const float* x, const float* g, const float* b, float* y, float* mean, float* rstd,
                        size_t rows, size_t H, float eps) {
  if (H == 0) return;
  parallel_for(rows, std::max<size_t>(1, kGrain / H), [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      const float* xi = x + r * H;
      double s = 0;
      for (size_t j = 0; j < H; j++) s += xi[j];
      float m = static_cast<float>(s / H);
      double v = 0;
      for (size_t j = 0; j < H; j++) v += (xi[j] - m) * (xi[j] - m);  // two passes, as tf.moments
      float rs = 1.0f / std::sqrt(static_cast<float>(v / H) + eps);
      float* yi = y + r * H;
      for (size_t j = 0; j < H; j++) yi[j] = (xi[j] - m) * rs * g[j] + b[j];
      mean[r] = m;
      rstd[r] = rs;
    }
  });
}

void layer_norm_backward(const float* dy, const float* x, const float* g, const float* mean, const float* rstd,
                         float* dx, float* dg, float* db, size_t rows, size_t H) {
  if (H == 0) return;
  size_t chunks = chunk_count(rows, H);
  std::vector<double> part(chunks * 2 * H, 0.0);  // per chunk: Σ dy·x̂ then Σ dy
  for_chunks(rows, chunks, [&](size_t c, size_t r0, size_t r1) {
    double* pg = &part[c * 2 * H];
    double* pb = pg + H;
    for (size_t r = r0; r < r1; r++) {
      const float *xi = x + r * H, *di = dy + r * H;
      float m = mean[r], rs = rstd[r];
      float* o = dx + r * H;
      double s1 = 0, s2 = 0;
      for (size_t j = 0; j < H; j++) {
        float xh = (xi[j] - m) * rs;
        o[j] = di[j] * g[j];  // dy·g, stored rounded: the second pass must not recompute it as an FMA
        s1 += o[j];           // (where dx cancels exactly, H = 1, that would keep a rounding error
        s2 += o[j] * xh;      // for rstd, up to 1/√eps, to magnify)
        pg[j] += di[j] * xh;
        pb[j] += di[j];
      }
      float m1 = static_cast<float>(s1 / H), m2 = static_cast<float>(s2 / H);
      for (size_t j = 0; j < H; j++) o[j] = rs * (o[j] - m1 - (xi[j] - m) * rs * m2);
    }
  });
  for (size_t j = 0; j < H; j++) {
    double sg = 0, sb = 0;
    for (size_t c = 0; c < chunks; c++) {
      sg += part[c * 2 * H + j];
      sb += part[c * 2 * H + H + j];
    }
    dg[j] = static_cast<float>(sg);
    db[j] = static_cast<float>(sb);
  }
}

double cross_entropy_forward(const float* logits, const int32_t* labels, float* lse, size_t N, size_t C) {
  if (N == 0) return 0.0;
  if (C == 0) return NAN;
  size_t chunks = chunk_count(N, C);
  std::vector<double> part(chunks, 0.0);
  for_chunks(N, chunks, [&](size_t c, size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      const float* xi = logits + r * C;
      float mx = row_max(xi, C);
      float acc[16] = {0};
      size_t j = 0;
      for (; j + 16 <= C; j += 16)
        for (size_t k = 0; k < 16; k++) acc[k] += fast_exp(xi[j + k] - mx);
      double s = 0;
      for (size_t k = 0; k < 16; k++) s += acc[k];
      for (; j < C; j++) s += fast_exp(xi[j] - mx);
      lse[r] = mx + static_cast<float>(std::log(s));
      int32_t y = labels[r];
      part[c] += (y < 0 || static_cast<size_t>(y) >= C) ? NAN : static_cast<double>(lse[r]) - xi[y];
    }
  });
  double total = 0;
  for (double p : part) total += p;
  return total;
}

void cross_entropy_backward(const float* logits, const int32_t* labels, const float* lse, float dy, float* dlogits,
                            size_t N, size_t C) {
  if (C == 0) return;
  parallel_for(N, std::max<size_t>(1, kGrain / C), [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      const float* xi = logits + r * C;
      float* o = dlogits + r * C;
      float l = lse[r];
      for (size_t j = 0; j < C; j++) o[j] = fast_exp(xi[j] - l) * dy;
      int32_t y = labels[r];
      if (y >= 0 && static_cast<size_t>(y) < C) o[y] -= dy;
    }
  });
}

namespace {

/** Row-wise softmax in place of S·scale + mask (mask one value per column), rows of T. */
void masked_softmax_rows(float* S, const float* mask, size_t T, float scale) {
  for (size_t t = 0; t < T; t++) {
    float* row = S + t * T;
    for (size_t s = 0; s < T; s++) row[s] = row[s] * scale + mask[s];
    float mx = row_max(row, T);
    float sum = 0;
    for (size_t s = 0; s < T; s++) {
      row[s] = fast_exp(row[s] - mx);
      sum += row[s];
    }
    float inv = 1.0f / sum;
    for (size_t s = 0; s < T; s++) row[s] *= inv;
  }
}

/** out = dropout(x) over n entries whose mask indices start at `first` (1/keep or 0). */
void dropout_block(const float* x, float* out, size_t n, size_t first, uint64_t base, float keep) {
  float scale = 1.0f / keep;
  for (size_t i = 0; i < n; i++) out[i] = dropout_keeps(base, first + i, keep) ? x[i] * scale : 0.0f;
}

}  // namespace

void attention_forward(const float* q, const float* k, const float* v, const float* mask, float* probs, float* ctx,
                       size_t B, size_t T, size_t A, size_t d, float scale, float keep, uint64_t seed) {
  size_t H = A * d, TT = T * T;
  uint64_t base = splitmix(seed);
  parallel_for(B * A, 1, [&](size_t i0, size_t i1) {
    std::vector<float> dropped(keep < 1.0f ? TT : 0);  // dropout(P) of one head
    for (size_t i = i0; i < i1; i++) {
      size_t b = i / A, h = i % A, off = b * T * H + h * d;
      float* P = probs + i * TT;  // [T, T]
      gemm_ld(false, true, T, T, d, q + off, H, k + off, H, P, T);  // Q_h·K_hᵀ
      masked_softmax_rows(P, mask + b * T, T, scale);
      const float* Pd = P;
      if (keep < 1.0f) {
        dropout_block(P, dropped.data(), TT, i * TT, base, keep);
        Pd = dropped.data();
      }
      gemm_ld(false, false, T, d, T, Pd, T, v + off, H, ctx + off, H);  // [T, T]·[T, d]
    }
  });
}

void attention_backward(const float* dctx, const float* q, const float* k, const float* v, const float* probs,
                        float* dq, float* dk, float* dv, size_t B, size_t T, size_t A, size_t d, float scale,
                        float keep, uint64_t seed) {
  size_t H = A * d, TT = T * T;
  uint64_t base = splitmix(seed);
  parallel_for(B * A, 1, [&](size_t i0, size_t i1) {
    std::vector<float> dP(TT), dropped(keep < 1.0f ? TT : 0);
    for (size_t i = i0; i < i1; i++) {
      size_t b = i / A, h = i % A, off = b * T * H + h * d;
      const float* P = probs + i * TT;
      const float* Pd = P;
      if (keep < 1.0f) {
        dropout_block(P, dropped.data(), TT, i * TT, base, keep);
        Pd = dropped.data();
      }
      gemm_ld(true, false, T, d, T, Pd, T, dctx + off, H, dv + off, H);            // dV = Pdᵀ·dctx
      gemm_ld(false, true, T, T, d, dctx + off, H, v + off, H, dP.data(), T);      // dPd = dctx·Vᵀ
      if (keep < 1.0f) dropout_block(dP.data(), dP.data(), TT, i * TT, base, keep);  // through the same mask
      for (size_t t = 0; t < T; t++) {  // softmax: dS = P ⊙ (dP − Σ dP ⊙ P), then the scale
        const float* p = P + t * T;
        float* g = dP.data() + t * T;
        float dot = 0;
        for (size_t s = 0; s < T; s++) dot += g[s] * p[s];
        for (size_t s = 0; s < T; s++) g[s] = p[s] * (g[s] - dot) * scale;
      }
      gemm_ld(false, false, T, d, T, dP.data(), T, k + off, H, dq + off, H);  // dQ = dS·K
      gemm_ld(true, false, T, d, T, dP.data(), T, q + off, H, dk + off, H);   // dK = dSᵀ·Q
    }
  });
}

double sum_squares(const float* const* xs, const size_t* ns, size_t count) {
  double total = 0;
  for (size_t a = 0; a < count; a++) {
    size_t n = ns[a], chunks = chunk_count(n, 1);
    std::vector<double> part(chunks, 0.0);
    for_chunks(n, chunks, [&](size_t c, size_t i0, size_t i1) {
      const float* x = xs[a];
      double s = 0;
      size_t i = i0;
      while (i + 16 <= i1) {  // float lanes over blocks of at most 1024, then into the double
        float acc[16] = {0};
        size_t end = std::min(i1, i + 1024);
        for (; i + 16 <= end; i += 16)
          for (size_t k = 0; k < 16; k++) acc[k] += x[i + k] * x[i + k];
        for (size_t k = 0; k < 16; k++) s += acc[k];
      }
      for (; i < i1; i++) s += static_cast<double>(x[i]) * x[i];
      part[c] = s;
    });
    for (double p : part) total += p;
  }
  return total;
}

}  // namespace span
