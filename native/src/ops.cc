// Elementwise, softmax, reduction, layout and indexing kernels. Each mirrors the tfjs-backend-cpu
// kernel named in its comment; work is split over the addon's pool (pool.h) once it is large
// enough to pay for the hand-off (kGrain elements).
#include "ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "mathfn.h"
#include "pool.h"

namespace span {
namespace {

constexpr size_t kGrain = 1 << 15;

template <class F>
inline void binary_row(F f, const float* a, const float* b, float* out, size_t n, int64_t sa, int64_t sb) {
  if (sa == 1 && sb == 1) {
    for (size_t i = 0; i < n; i++) out[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    float y = b[0];
    for (size_t i = 0; i < n; i++) out[i] = f(a[i], y);
  } else if (sa == 0 && sb == 1) {
    float x = a[0];
    for (size_t i = 0; i < n; i++) out[i] = f(x, b[i]);
  } else {
    for (size_t i = 0; i < n; i++) out[i] = f(a[i * sa], b[i * sb]);
  }
}

/** Broadcasting driver shared by every binary op (tfjs-backend-cpu binaryImpl / createSimpleBinaryKernelImpl). */
template <class F>
void binary_loop(F f, const float* a, const float* b, float* out, int rank, const int64_t* shape, const int64_t* sa,
                 const int64_t* sb) {
  size_t inner = shape[rank - 1];
  size_t rows = 1;
  for (int d = 0; d < rank - 1; d++) rows *= shape[d];
  if (inner == 0 || rows == 0) return;
  size_t grain = std::max<size_t>(1, kGrain / inner);
  parallel_for(rows, grain, [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      int64_t oa = 0, ob = 0;
      size_t rest = r;
      for (int d = rank - 2; d >= 0; d--) {
        size_t i = rest % shape[d];
        rest /= shape[d];
        oa += i * sa[d];
        ob += i * sb[d];
      }
      binary_row(f, a + oa, b + ob, out + r * inner, inner, sa[rank - 1], sb[rank - 1]);
    }
  });
}

// Maximum/Minimum follow JavaScript's Math.max/Math.min: NaN wins.
inline float js_max(float x, float y) { return (std::isnan(x) || std::isnan(y)) ? NAN : (x > y ? x : y); }
inline float js_min(float x, float y) { return (std::isnan(x) || std::isnan(y)) ? NAN : (x < y ? x : y); }

template <class F>
void unary_loop(F f, const float* x, float* out, size_t n) {
  parallel_for(n, kGrain, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; i++) out[i] = f(x[i]);
  });
}

}  // namespace

void binary(int op, const float* a, const float* b, float* out, int rank, const int64_t* shape, const int64_t* sa,
            const int64_t* sb) {
  switch (op) {
    case kAdd: return binary_loop([](float x, float y) { return x + y; }, a, b, out, rank, shape, sa, sb);
    case kSub: return binary_loop([](float x, float y) { return x - y; }, a, b, out, rank, shape, sa, sb);
    case kMul: return binary_loop([](float x, float y) { return x * y; }, a, b, out, rank, shape, sa, sb);
    case kDiv: return binary_loop([](float x, float y) { return x / y; }, a, b, out, rank, shape, sa, sb);
    case kMax: return binary_loop(js_max, a, b, out, rank, shape, sa, sb);
    case kMin: return binary_loop(js_min, a, b, out, rank, shape, sa, sb);
    case kSquaredDiff:
      return binary_loop([](float x, float y) { return (x - y) * (x - y); }, a, b, out, rank, shape, sa, sb);
  }
}

void unary(int op, const float* x, float* out, size_t n) {
  switch (op) {
    case kExp: return unary_loop([](float v) { return fast_exp(v); }, x, out, n);
    case kLog: return unary_loop([](float v) { return std::log(v); }, x, out, n);
    case kErf: return unary_loop([](float v) { return fast_erf(v); }, x, out, n);
    case kSqrt: return unary_loop([](float v) { return std::sqrt(v); }, x, out, n);
    case kRsqrt: return unary_loop([](float v) { return 1.0f / std::sqrt(v); }, x, out, n);
    case kSquare: return unary_loop([](float v) { return v * v; }, x, out, n);
    case kNeg: return unary_loop([](float v) { return -v; }, x, out, n);
    case kTanh: return unary_loop([](float v) { return std::tanh(v); }, x, out, n);
    case kSigmoid: return unary_loop([](float v) { return 1.0f / (1.0f + fast_exp(-v)); }, x, out, n);
    case kRelu: return unary_loop([](float v) { return std::isnan(v) ? v : (v < 0 ? 0.0f : v); }, x, out, n);
    case kAbs: return unary_loop([](float v) { return std::fabs(v); }, x, out, n);
    case kFloor: return unary_loop([](float v) { return std::floor(v); }, x, out, n);
    case kReciprocal: return unary_loop([](float v) { return 1.0f / v; }, x, out, n);
  }
}

namespace {
constexpr size_t kLanes = 16;

/** Σ of a contiguous row in double, over kLanes partial sums (vectorisable; order differs from JS by rounding only). */
double row_sum(const float* row, size_t R) {
  double acc[kLanes] = {0};
  size_t r = 0;
  for (; r + kLanes <= R; r += kLanes)
    for (size_t k = 0; k < kLanes; k++) acc[k] += row[r + k];
  double total = 0;
  for (size_t k = 0; k < kLanes; k++) total += acc[k];
  for (; r < R; r++) total += row[r];
  return total;
}

/** Max (or min) of a contiguous row (R >= 1), NaN if any entry is NaN, over kLanes running extremes. */
float row_extreme(const float* row, size_t R, bool isMax) {
  float m[kLanes];
  bool nan = false;
  for (size_t k = 0; k < kLanes; k++) m[k] = row[0];
  size_t r = 0;
  for (; r + kLanes <= R; r += kLanes)
    for (size_t k = 0; k < kLanes; k++) {
      float v = row[r + k];
      nan |= v != v;
      m[k] = isMax ? (v > m[k] ? v : m[k]) : (v < m[k] ? v : m[k]);
    }
  float best = m[0];
  for (size_t k = 1; k < kLanes; k++) best = isMax ? (m[k] > best ? m[k] : best) : (m[k] < best ? m[k] : best);
  for (; r < R; r++) {
    float v = row[r];
    nan |= v != v;
    best = isMax ? (v > best ? v : best) : (v < best ? v : best);
  }
  return nan ? NAN : best;
}
}  // namespace

// tfjs-backend-cpu Softmax: exp(x - max(x)) / sum(exp(x - max(x))) along the last axis.
void softmax(const float* x, float* out, size_t rows, size_t cols) {
  if (cols == 0) return;
  parallel_for(rows, std::max<size_t>(1, kGrain / cols), [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      const float* xi = x + r * cols;
      float* yi = out + r * cols;
      float mx = row_extreme(xi, cols, true);
      for (size_t j = 0; j < cols; j++) yi[j] = fast_exp(xi[j] - mx);
      float inv = static_cast<float>(1.0 / row_sum(yi, cols));
      for (size_t j = 0; j < cols; j++) yi[j] *= inv;
    }
  });
}

// tfjs-backend-cpu Sum/Mean/Max/Min: the reduced axes are contiguous here ([outer, R, inner]);
// sums accumulate in double as the JS kernels do; Max/Min let NaN win (maxImpl: isNaN || >).

/**
 * The first index of the row's greatest (least) value, as tfjs-backend-cpu's argMax/argMinImpl: the
 * running best starts at element 0 and moves only on a strictly greater (less) value, so NaN never wins
 * unless it is element 0.
 */
size_t row_arg_extreme(const float* row, size_t R, bool isMax) {
  float best = row[0];
  size_t at = 0;
  for (size_t r = 1; r < R; r++)
    if (isMax ? row[r] > best : row[r] < best) best = row[r], at = r;
  return at;
}

void reduce(int op, const float* x, float* out, size_t outer, size_t R, size_t inner) {
  if (op == kArgMax || op == kArgMin) {  // rows only (inner 1: the caller checks); indices below 2^24 are exact floats
    parallel_for(outer, std::max<size_t>(1, kGrain / R), [&](size_t o0, size_t o1) {
      for (size_t o = o0; o < o1; o++) out[o] = static_cast<float>(row_arg_extreme(x + o * R, R, op == kArgMax));
    });
    return;
  }
  if (inner == 1) {  // reducing contiguous rows: the common case (last axis)
    parallel_for(outer, std::max<size_t>(1, kGrain / R), [&](size_t o0, size_t o1) {
      for (size_t o = o0; o < o1; o++) {
        const float* row = x + o * R;
        if (op == kSum || op == kMean) out[o] = static_cast<float>(row_sum(row, R) / (op == kMean ? R : 1));
        else out[o] = row_extreme(row, R, op == kRMax);
      }
    });
    return;
  }
  constexpr size_t kTile = 256;
  size_t tiles = (inner + kTile - 1) / kTile;
  size_t grain = std::max<size_t>(1, kGrain / std::max<size_t>(1, R * std::min(inner, kTile)));
  parallel_for(outer * tiles, grain, [&](size_t t0, size_t t1) {
    double acc[kTile];
    for (size_t t = t0; t < t1; t++) {
      size_t o = t / tiles, j0 = (t % tiles) * kTile, w = std::min(kTile, inner - j0);
      const float* base = x + o * R * inner + j0;
      if (op == kSum || op == kMean) {
        std::fill(acc, acc + w, 0.0);
        for (size_t r = 0; r < R; r++)
          for (size_t j = 0; j < w; j++) acc[j] += base[r * inner + j];
        double scale = op == kMean ? 1.0 / R : 1.0;
        for (size_t j = 0; j < w; j++) out[o * inner + j0 + j] = static_cast<float>(acc[j] * scale);
      } else {
        bool isMax = op == kRMax;
        for (size_t j = 0; j < w; j++) acc[j] = base[j];
        for (size_t r = 1; r < R; r++)
          for (size_t j = 0; j < w; j++) {
            double v = base[r * inner + j];
            if (std::isnan(v) || (isMax ? v > acc[j] : v < acc[j])) acc[j] = v;
          }
        for (size_t j = 0; j < w; j++) out[o * inner + j0 + j] = static_cast<float>(acc[j]);
      }
    }
  });
}

namespace {
// [batch, R, C] → [batch, C, R] in 32×32 tiles, so both sides stay in cache.
void swap_last_two(const float* x, float* out, size_t batch, size_t R, size_t C) {
  constexpr size_t kTile = 32;
  size_t tr = (R + kTile - 1) / kTile, tc = (C + kTile - 1) / kTile;
  parallel_for(batch * tr, std::max<size_t>(1, kGrain / (kTile * C)), [&](size_t t0, size_t t1) {
    for (size_t t = t0; t < t1; t++) {
      size_t b = t / tr, r0 = (t % tr) * kTile, r1 = std::min(R, r0 + kTile);
      const float* xb = x + b * R * C;
      float* ob = out + b * R * C;
      for (size_t cb = 0; cb < tc; cb++) {
        size_t c0 = cb * kTile, c1 = std::min(C, c0 + kTile);
        for (size_t c = c0; c < c1; c++)
          for (size_t r = r0; r < r1; r++) ob[c * R + r] = xb[r * C + c];
      }
    }
  });
}
}  // namespace

// tfjs-backend-cpu Transpose (transposeImpl): out[i] = x[perm-mapped index]; rows of the
// output's last axis are filled with a (possibly strided) walk over the input; a swap of the
// last two axes (matrix transposes, batched) goes through cache-sized tiles instead.
void transpose(const float* x, float* out, int rank, const int64_t* shape, const int64_t* perm) {
  bool swapLast = rank >= 2 && perm[rank - 1] == rank - 2 && perm[rank - 2] == rank - 1;
  for (int d = 0; swapLast && d < rank - 2; d++) swapLast = perm[d] == d;
  if (swapLast) {
    size_t batch = 1;
    for (int d = 0; d < rank - 2; d++) batch *= shape[d];
    return swap_last_two(x, out, batch, shape[rank - 2], shape[rank - 1]);
  }
  std::vector<int64_t> inStride(rank), outShape(rank), walk(rank);
  int64_t s = 1;
  for (int d = rank - 1; d >= 0; d--) {
    inStride[d] = s;
    s *= shape[d];
  }
  size_t total = s;
  for (int d = 0; d < rank; d++) {
    outShape[d] = shape[perm[d]];
    walk[d] = inStride[perm[d]];
  }
  size_t inner = outShape[rank - 1];
  if (total == 0 || inner == 0) return;
  size_t rows = total / inner;
  int64_t step = walk[rank - 1];
  parallel_for(rows, std::max<size_t>(1, kGrain / inner), [&](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; r++) {
      int64_t off = 0;
      size_t rest = r;
      for (int d = rank - 2; d >= 0; d--) {
        off += (rest % outShape[d]) * walk[d];
        rest /= outShape[d];
      }
      float* o = out + r * inner;
      const float* xi = x + off;
      for (size_t j = 0; j < inner; j++) o[j] = xi[j * step];
    }
  });
}

// tfjs-backend-cpu GatherV2 (gatherV2Impl) with batchDims 0.
bool gather(const uint32_t* x, const int32_t* idx, uint32_t* out, size_t outer, size_t R, size_t inner, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (idx[i] < 0 || static_cast<size_t>(idx[i]) >= R) return false;
  parallel_for(outer * n, std::max<size_t>(1, kGrain / std::max<size_t>(1, inner)), [&](size_t b, size_t e) {
    for (size_t t = b; t < e; t++) {
      size_t o = t / n, i = t % n;
      std::memcpy(out + t * inner, x + (o * R + idx[i]) * inner, inner * sizeof(uint32_t));
    }
  });
  return true;
}

// tfjs-backend-cpu ScatterNd (scatterImpl with sumDupeIndices): zeros, then += each update slice.
bool scatter_add(const float* updates, const int64_t* offsets, size_t n, size_t slice, float* out, size_t outSize) {
  for (size_t i = 0; i < n; i++)
    if (offsets[i] < 0 || static_cast<size_t>(offsets[i]) + slice > outSize) return false;
  std::memset(out, 0, outSize * sizeof(float));
  for (size_t i = 0; i < n; i++) {
    float* o = out + offsets[i];
    const float* u = updates + i * slice;
    for (size_t j = 0; j < slice; j++) o[j] += u[j];
  }
  return true;
}

// Same distribution as tf.dropout (x · floor(u + keep) / keep with u ~ U[0,1)): the mask is
// 1/keep with probability keep; the uniform comes from 24 bits of SplitMix64 (mathfn.h dropout_keeps).
void dropout(const float* x, float* out, size_t n, float keep, uint64_t seed) {
  float scale = 1.0f / keep;
  uint64_t base = splitmix(seed);
  parallel_for(n, kGrain, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; i++) out[i] = dropout_keeps(base, i, keep) ? x[i] * scale : 0.0f;
  });
}

// AdamW as span's optimiser (src/core/train/optim.ts) and torch.optim.AdamW compute it:
// m' = β1 m + (1-β1) g; v' = β2 v + (1-β2) g²; p' = p(1 - lr·wd) - lr (m'/bc1) / (√(v'/bc2) + ε).
void adamw(const float* p, const float* m, const float* v, const float* g, float* p2, float* m2, float* v2, size_t n,
           float lr, float beta1, float beta2, float eps, float decay, float bc1, float bc2, float gscale) {
  float keepW = 1.0f - lr * decay;
  parallel_for(n, kGrain, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; i++) {
      float gi = g[i] * gscale;
      float mi = beta1 * m[i] + (1.0f - beta1) * gi;
      float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
      m2[i] = mi;
      v2[i] = vi;
      p2[i] = p[i] * keepW - (lr / bc1) * (mi / (std::sqrt(vi / bc2) + eps));
    }
  });
}

}  // namespace span
