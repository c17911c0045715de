#pragma once
#include <cstddef>
#include <cstdint>

namespace span {

enum BinaryOp { kAdd, kSub, kMul, kDiv, kMax, kMin, kSquaredDiff };
enum UnaryOp { kExp, kLog, kErf, kSqrt, kRsqrt, kSquare, kNeg, kTanh, kSigmoid, kRelu, kAbs, kFloor, kReciprocal };
enum ReduceOp { kSum, kMean, kRMax, kRMin, kArgMax, kArgMin };

/** out = a (op) b with broadcasting, over collapsed dims `shape` and per-operand element strides (0 = broadcast). */
void binary(int op, const float* a, const float* b, float* out, int rank, const int64_t* shape, const int64_t* sa,
            const int64_t* sb);
/** out[i] = op(x[i]). */
void unary(int op, const float* x, float* out, size_t n);
/** Row-wise softmax of [rows, cols] (tfjs Softmax over the last axis). */
void softmax(const float* x, float* out, size_t rows, size_t cols);
/** out[o, j] = reduce_r x[o, r, j] for x viewed as [outer, R, inner]; kArgMax/kArgMin (inner 1 only) write the index r as a float. */
void reduce(int op, const float* x, float* out, size_t outer, size_t R, size_t inner);
/** out = transpose(x, perm) over collapsed dims. */
void transpose(const float* x, float* out, int rank, const int64_t* shape, const int64_t* perm);
/** out[o, n, j] = x[o, idx[n], j] (x [outer, R, inner]; 4-byte elements); false on an out-of-range index. */
bool gather(const uint32_t* x, const int32_t* idx, uint32_t* out, size_t outer, size_t R, size_t inner, size_t n);
/** out (zeroed, size outSize) += updates[n, :] at offsets[n] (ScatterNd sums duplicates); false when out of range. */
bool scatter_add(const float* updates, const int64_t* offsets, size_t n, size_t slice, float* out, size_t outSize);
/**
 * Inverted dropout: out[i] = x[i]/keep with probability keep, else 0, the draw for i coming
 * from a counter-based generator of (seed, i) alone, so the backward pass applies the very same
 * mask to dy by calling it again with the seed (no mask is stored).
 */
void dropout(const float* x, float* out, size_t n, float keep, uint64_t seed);
/**
 * One AdamW update (torch.optim.AdamW) of the gradient g·gscale (gscale: global-norm clipping):
 * writes p', m', v', which may be p, m, v themselves (each element is read before it is written).
 */
void adamw(const float* p, const float* m, const float* v, const float* g, float* p2, float* m2, float* v2, size_t n,
           float lr, float beta1, float beta2, float eps, float decay, float bc1, float bc2, float gscale);

}  // namespace span
