// See residual.h. Each step calls the kernel the chain would (fused.h linear_forward, layer_norm_*,
// linear_backward) or repeats its one-line formula (ops.cc dropout, the Add kernel), so the values are
// the chain's bit for bit; what goes is three tfjs dispatches and two [N, H] buffers each way.
#include "residual.h"

#include "fused.h"
#include "mathfn.h"
#include "pool.h"

namespace span {
namespace {

constexpr size_t kGrain = 1 << 15;

/** x[i] = dropout(x[i]) in place, as ops.cc dropout draws and scales it. */
void dropout_in_place(float* x, size_t n, float keep, uint64_t seed) {
  float scale = 1.0f / keep;
  uint64_t base = splitmix(seed);
  parallel_for(n, kGrain, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) x[i] = dropout_keeps(base, i, keep) ? x[i] * scale : 0.0f;
  });
}

}  // namespace

void residual_layer_norm_forward(const float* x, const float* w, const float* b, const float* residual, const float* g,
                                 const float* beta, float* s, float* y, float* mean, float* rstd, size_t N, size_t in,
                                 size_t H, float eps, float keep, uint64_t seed) {
  linear_forward(x, w, b, s, s, N, in, H, false);  // z = x·Wᵀ + b into s [N, H]
  if (keep < 1.0f) dropout_in_place(s, N * H, keep, seed);
  // the add in a pass of its own: z·scale + residual in one expression could become an FMA, which the chain's two kernels never are
  parallel_for(N * H, kGrain, [&](size_t i0, size_t i1) {
    for (size_t i = i0; i < i1; i++) s[i] = s[i] + residual[i];
  });
  layer_norm_forward(s, g, beta, y, mean, rstd, N, H, eps);
}

void residual_layer_norm_backward(const float* dy, const float* x, const float* w, const float* g, const float* s,
                                  const float* mean, const float* rstd, float* ds, float* dz, float* dx, float* dw,
                                  float* db, float* dg, float* dbeta, size_t N, size_t in, size_t H, float keep,
                                  uint64_t seed) {
  layer_norm_backward(dy, s, g, mean, rstd, ds, dg, dbeta, N, H);  // ds: the residual's gradient too
  const float* gz = ds;
  if (keep < 1.0f) {
    float scale = 1.0f / keep;
    uint64_t base = splitmix(seed);
    parallel_for(N * H, kGrain, [&](size_t i0, size_t i1) {
      for (size_t i = i0; i < i1; i++) dz[i] = dropout_keeps(base, i, keep) ? ds[i] * scale : 0.0f;
    });
    gz = dz;
  }
  linear_backward(gz, x, w, nullptr, nullptr, dx, dw, db, N, in, H, false);
}

}  // namespace span
