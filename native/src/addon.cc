// Node-API entry points of span's native kernels. Every function is synchronous and takes
// its tensors as TypedArrays that JavaScript allocated (outputs included), so the addon never
// owns tensor memory. Shapes arrive as plain arrays of numbers. See src/core/engine/native.ts.
#include <node_api.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "addon_gemm.h"
#include "flash.h"
#include "fused.h"
#include "napi-util.h"
#include "gemm.h"
#include "ops.h"
#include "pool.h"
#include "pool_check.h"
#include "residual.h"

namespace {

using span_napi::number;

#define CHECK(call)                                               \
  do {                                                            \
    if ((call) != napi_ok) {                                      \
      napi_throw_error(env, nullptr, "span_native: bad argument"); \
      return nullptr;                                             \
    }                                                             \
  } while (0)

struct Args {
  napi_value v[19];
  size_t n = 19;  // the most any function takes (residualLayerNormBackward)
};

bool args(napi_env env, napi_callback_info info, Args& a, size_t want) {
  if (napi_get_cb_info(env, info, &a.n, a.v, nullptr, nullptr) != napi_ok || a.n < want) {
    napi_throw_error(env, nullptr, "span_native: too few arguments");
    return false;
  }
  return true;
}

/** Pointer to the first element of a TypedArray (byte offset applied) and its length. */
template <class T>
bool typed(napi_env env, napi_value v, T** data, size_t* len) {
  napi_typedarray_type type;
  void* ptr;
  napi_value ab;
  size_t off;
  if (napi_get_typedarray_info(env, v, &type, len, &ptr, &ab, &off) != napi_ok) return false;
  *data = static_cast<T*>(ptr);
  return true;
}

bool num(napi_env env, napi_value v, double* out) { return napi_get_value_double(env, v, out) == napi_ok; }
bool flag(napi_env env, napi_value v, bool* out) { return napi_get_value_bool(env, v, out) == napi_ok; }

bool ints(napi_env env, napi_value v, std::vector<int64_t>& out) {
  uint32_t n;
  if (napi_get_array_length(env, v, &n) != napi_ok) return false;
  out.resize(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value e;
    if (napi_get_element(env, v, i, &e) != napi_ok || napi_get_value_int64(env, e, &out[i]) != napi_ok) return false;
  }
  return true;
}

napi_value boolean(napi_env env, bool b) {
  napi_value r;
  napi_get_boolean(env, b, &r);
  return r;
}

// Interface version: bumped whenever a function's arguments change (NATIVE_ABI in native.ts).
constexpr int kAbi = 7;

// info() → {blas, threads, abi, precision, gemm, gemmPath, gemmPaths, gemmImpl, bf16, bf16Convert} (addon_gemm.h)
napi_value Info(napi_env env, napi_callback_info) {
  napi_value o, blas, threads, abi, precision;
  napi_create_object(env, &o);
  napi_create_string_utf8(env, span::blas_name(), NAPI_AUTO_LENGTH, &blas);
  napi_create_int32(env, span::get_threads(), &threads);
  napi_set_named_property(env, o, "blas", blas);
  napi_set_named_property(env, o, "threads", threads);
  napi_create_int32(env, kAbi, &abi);
  napi_set_named_property(env, o, "abi", abi);
  napi_create_string_utf8(env, span::gemm_precision() == span::Precision::bf16 ? "bf16" : "fp32", NAPI_AUTO_LENGTH,
                          &precision);
  napi_set_named_property(env, o, "precision", precision);
  span_gemm_napi::addInfo(env, o);
  return o;
}

// setPrecision("fp32" | "bf16"): the matrix products' precision (gemm.h)
napi_value SetPrecision(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 1)) return nullptr;
  char name[8] = {0};
  size_t len = 0;
  CHECK(napi_get_value_string_utf8(env, a.v[0], name, sizeof name, &len));
  std::string p(name, len);
  CHECK(p == "fp32" || p == "bf16" ? napi_ok : napi_invalid_arg);
  span::set_gemm_precision(p == "bf16" ? span::Precision::bf16 : span::Precision::fp32);
  return nullptr;
}

// setThreads(n)
napi_value SetThreads(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 1)) return nullptr;
  double n;
  CHECK(num(env, a.v[0], &n) ? napi_ok : napi_invalid_arg);
  span::set_threads(static_cast<int>(n));
  return nullptr;
}

// poolCheck(jobs, seed) → {jobs, missing, repeated, overlong, threadsSeen, allAtOnce} (pool_check.h)
napi_value PoolCheck(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 2)) return nullptr;
  double jobs, seed;
  CHECK(num(env, a.v[0], &jobs) && num(env, a.v[1], &seed) ? napi_ok : napi_invalid_arg);
  const span::PoolCheck r = span::check_pool(static_cast<size_t>(jobs), static_cast<unsigned>(seed));
  napi_value o;
  napi_create_object(env, &o);
  const std::pair<const char*, napi_value> fields[] = {
      {"jobs", number(env, r.jobs)},         {"missing", number(env, r.missing)},
      {"repeated", number(env, r.repeated)}, {"overlong", number(env, r.overlong)},
      {"threadsSeen", number(env, r.threads_seen)}, {"allAtOnce", boolean(env, r.all_at_once)}};
  for (const auto& [key, value] : fields) napi_set_named_property(env, o, key, value);
  return o;
}

// matmul(a, b, out, batchA, batchB, M, N, K, transA, transB)
napi_value MatMul(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 10)) return nullptr;
  float *x, *y, *z;
  size_t nx, ny, nz;
  double d[5];
  bool ta, tb;
  CHECK(typed(env, a.v[0], &x, &nx) && typed(env, a.v[1], &y, &ny) && typed(env, a.v[2], &z, &nz) ? napi_ok
                                                                                                      : napi_invalid_arg);
  for (int i = 0; i < 5; i++) CHECK(num(env, a.v[3 + i], &d[i]) ? napi_ok : napi_invalid_arg);
  CHECK(flag(env, a.v[8], &ta) && flag(env, a.v[9], &tb) ? napi_ok : napi_invalid_arg);
  size_t bA = d[0], bB = d[1], M = d[2], N = d[3], K = d[4];
  size_t batch = bA > bB ? bA : bB;
  if (nx < bA * M * K || ny < bB * K * N || nz < batch * M * N) {
    napi_throw_range_error(env, nullptr, "span_native.matmul: buffer too small");
    return nullptr;
  }
  span::batch_matmul(x, y, z, bA, bB, M, N, K, ta, tb);
  return nullptr;
}

// binary(op, a, b, out, shape, stridesA, stridesB)
napi_value Binary(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 7)) return nullptr;
  double op;
  float *x, *y, *z;
  size_t nx, ny, nz;
  std::vector<int64_t> shape, sa, sb;
  CHECK(num(env, a.v[0], &op) ? napi_ok : napi_invalid_arg);
  CHECK(typed(env, a.v[1], &x, &nx) && typed(env, a.v[2], &y, &ny) && typed(env, a.v[3], &z, &nz) ? napi_ok
                                                                                                      : napi_invalid_arg);
  CHECK(ints(env, a.v[4], shape) && ints(env, a.v[5], sa) && ints(env, a.v[6], sb) ? napi_ok : napi_invalid_arg);
  if (shape.empty() || sa.size() != shape.size() || sb.size() != shape.size()) {
    napi_throw_range_error(env, nullptr, "span_native.binary: rank mismatch");
    return nullptr;
  }
  span::binary(static_cast<int>(op), x, y, z, static_cast<int>(shape.size()), shape.data(), sa.data(), sb.data());
  return nullptr;
}

// unary(op, x, out)
napi_value Unary(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 3)) return nullptr;
  double op;
  float *x, *z;
  size_t nx, nz;
  CHECK(num(env, a.v[0], &op) && typed(env, a.v[1], &x, &nx) && typed(env, a.v[2], &z, &nz) ? napi_ok
                                                                                               : napi_invalid_arg);
  span::unary(static_cast<int>(op), x, z, nx < nz ? nx : nz);
  return nullptr;
}

// softmax(x, out, rows, cols)
napi_value Softmax(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 4)) return nullptr;
  float *x, *z;
  size_t nx, nz;
  double rows, cols;
  CHECK(typed(env, a.v[0], &x, &nx) && typed(env, a.v[1], &z, &nz) && num(env, a.v[2], &rows) &&
                num(env, a.v[3], &cols)
            ? napi_ok
            : napi_invalid_arg);
  if (nx < rows * cols || nz < rows * cols) {
    napi_throw_range_error(env, nullptr, "span_native.softmax: buffer too small");
    return nullptr;
  }
  span::softmax(x, z, rows, cols);
  return nullptr;
}

// reduce(op, x, out, outer, R, inner)
napi_value Reduce(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 6)) return nullptr;
  double op, d[3];
  float *x, *z;
  size_t nx, nz;
  CHECK(num(env, a.v[0], &op) && typed(env, a.v[1], &x, &nx) && typed(env, a.v[2], &z, &nz) ? napi_ok
                                                                                               : napi_invalid_arg);
  for (int i = 0; i < 3; i++) CHECK(num(env, a.v[3 + i], &d[i]) ? napi_ok : napi_invalid_arg);
  size_t outer = d[0], R = d[1], inner = d[2];
  if (nx < outer * R * inner || nz < outer * inner) {
    napi_throw_range_error(env, nullptr, "span_native.reduce: buffer too small");
    return nullptr;
  }
  if ((op == span::kArgMax || op == span::kArgMin) && (inner != 1 || R == 0 || R > (1u << 24))) {
    napi_throw_range_error(env, nullptr, "span_native.reduce: argmax/argmin over rows of 1 to 2^24 values only");
    return nullptr;
  }
  span::reduce(static_cast<int>(op), x, z, outer, R, inner);
  return nullptr;
}

// transpose(x, out, shape, perm)
napi_value Transpose(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 4)) return nullptr;
  float *x, *z;
  size_t nx, nz;
  std::vector<int64_t> shape, perm;
  CHECK(typed(env, a.v[0], &x, &nx) && typed(env, a.v[1], &z, &nz) && ints(env, a.v[2], shape) &&
                ints(env, a.v[3], perm)
            ? napi_ok
            : napi_invalid_arg);
  size_t total = 1;
  for (auto s : shape) total *= s;
  if (shape.empty() || perm.size() != shape.size() || nx < total || nz < total) {
    napi_throw_range_error(env, nullptr, "span_native.transpose: bad shape");
    return nullptr;
  }
  span::transpose(x, z, static_cast<int>(shape.size()), shape.data(), perm.data());
  return nullptr;
}

// gather(x, indices:Int32Array, out, outer, R, inner) → false on an out-of-range index
napi_value Gather(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 6)) return nullptr;
  uint32_t *x, *z;
  int32_t* idx;
  size_t nx, ni, nz;
  double d[3];
  CHECK(typed(env, a.v[0], &x, &nx) && typed(env, a.v[1], &idx, &ni) && typed(env, a.v[2], &z, &nz) ? napi_ok
                                                                                                       : napi_invalid_arg);
  for (int i = 0; i < 3; i++) CHECK(num(env, a.v[3 + i], &d[i]) ? napi_ok : napi_invalid_arg);
  size_t outer = d[0], R = d[1], inner = d[2];
  if (nx < outer * R * inner || nz < outer * ni * inner) {
    napi_throw_range_error(env, nullptr, "span_native.gather: buffer too small");
    return nullptr;
  }
  return boolean(env, span::gather(x, idx, z, outer, R, inner, ni));
}

// scatterAdd(updates, offsets:Int32Array, slice, out) → false on an out-of-range offset
napi_value ScatterAdd(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 4)) return nullptr;
  float *u, *z;
  int32_t* off;
  size_t nu, no, nz;
  double slice;
  CHECK(typed(env, a.v[0], &u, &nu) && typed(env, a.v[1], &off, &no) && num(env, a.v[2], &slice) &&
                typed(env, a.v[3], &z, &nz)
            ? napi_ok
            : napi_invalid_arg);
  if (nu < no * static_cast<size_t>(slice)) {
    napi_throw_range_error(env, nullptr, "span_native.scatterAdd: buffer too small");
    return nullptr;
  }
  std::vector<int64_t> offsets(off, off + no);
  return boolean(env, span::scatter_add(u, offsets.data(), no, slice, z, nz));
}

// dropout(x, out, keep, seed)
napi_value Dropout(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 4)) return nullptr;
  float *x, *z;
  size_t nx, nz;
  double keep, seed;
  CHECK(typed(env, a.v[0], &x, &nx) && typed(env, a.v[1], &z, &nz) && num(env, a.v[2], &keep) &&
                num(env, a.v[3], &seed)
            ? napi_ok
            : napi_invalid_arg);
  if (nz < nx) {
    napi_throw_range_error(env, nullptr, "span_native.dropout: buffer too small");
    return nullptr;
  }
  span::dropout(x, z, nx, static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// adamw(p, m, v, g, p2, m2, v2, lr, beta1, beta2, eps, decay, bc1, bc2, gscale)
napi_value AdamW(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 15)) return nullptr;
  float* t[7];
  size_t n[7];
  double h[8];
  for (int i = 0; i < 7; i++) CHECK(typed(env, a.v[i], &t[i], &n[i]) ? napi_ok : napi_invalid_arg);
  for (int i = 0; i < 8; i++) CHECK(num(env, a.v[7 + i], &h[i]) ? napi_ok : napi_invalid_arg);
  for (int i = 1; i < 7; i++)
    if (n[i] != n[0]) {
      napi_throw_range_error(env, nullptr, "span_native.adamw: size mismatch");
      return nullptr;
    }
  span::adamw(t[0], t[1], t[2], t[3], t[4], t[5], t[6], n[0], h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]);
  return nullptr;
}

/** A Float32Array argument of at least `want` elements (null allowed when `optional`); throws otherwise. */
bool f32arg(napi_env env, napi_value v, size_t want, float** out, const char* what, bool optional = false) {
  napi_valuetype t;
  if (optional && napi_typeof(env, v, &t) == napi_ok && (t == napi_null || t == napi_undefined)) {
    *out = nullptr;
    return true;
  }
  size_t n;
  if (!typed(env, v, out, &n)) {
    napi_throw_type_error(env, nullptr, what);
    return false;
  }
  if (n < want) {
    napi_throw_range_error(env, nullptr, what);
    return false;
  }
  return true;
}

/** Numbers of a call, from argument `from` on, as size_t (dims) into d[0..count). */
bool dims(napi_env env, const Args& a, size_t from, size_t count, size_t* d) {
  for (size_t i = 0; i < count; i++) {
    double x;
    if (!num(env, a.v[from + i], &x) || x < 0) {
      napi_throw_type_error(env, nullptr, "span_native: bad dimension");
      return false;
    }
    d[i] = static_cast<size_t>(x);
  }
  return true;
}

/** An Int32Array argument of at least `want` elements. */
bool i32arg(napi_env env, napi_value v, size_t want, int32_t** out, const char* what) {
  size_t n;
  if (!typed(env, v, out, &n) || n < want) {
    napi_throw_range_error(env, nullptr, what);
    return false;
  }
  return true;
}

/**
 * One fused kernel's arguments, read in the order the function reads them: `ok` turns false at the
 * first one that is wrong, thrown as each helper above throws it (too few arguments, a bad
 * dimension, "bad argument" for a number or flag, `what` for a buffer of the wrong type or size);
 * a read after that throws nothing more and returns a null or zero the function never uses.
 */
struct Call {
  napi_env env;
  Args a;
  const char* what;
  bool ok;
  Call(napi_env e, napi_callback_info info, size_t want, const char* w) : env(e), what(w) { ok = args(env, info, a, want); }
  bool sizes(size_t from, size_t count, size_t* d) { return ok = ok && dims(env, a, from, count, d); }
  double real(size_t i) {
    double x = 0;
    if (ok && !num(env, a.v[i], &x)) bad();
    return x;
  }
  bool on(size_t i) {
    bool b = false;
    if (ok && !flag(env, a.v[i], &b)) bad();
    return b;
  }
  float* f32(size_t i, size_t want, bool optional = false) {
    float* p = nullptr;
    ok = ok && f32arg(env, a.v[i], want, &p, what, optional);
    return p;
  }
  int32_t* i32(size_t i, size_t want) {
    int32_t* p = nullptr;
    ok = ok && i32arg(env, a.v[i], want, &p, what);
    return p;
  }
  void bad() {
    napi_throw_error(env, nullptr, "span_native: bad argument");
    ok = false;
  }
};

// linearForward(x, w, b|null, z, y, N, in, out, gelu)
napi_value LinearForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 9, "span_native.linearForward: bad buffer");
  size_t d[3] = {0, 0, 0};
  c.sizes(5, 3, d);
  const bool act = c.on(8);
  const size_t N = d[0], in = d[1], out = d[2];
  float *x = c.f32(0, N * in), *w = c.f32(1, out * in), *b = c.f32(2, out, true), *z = c.f32(3, N * out), *y = c.f32(4, N * out);
  if (c.ok) span::linear_forward(x, w, b, z, y, N, in, out, act);
  return nullptr;
}

// linearBackward(dy, x, w, z|null, dz|null, dx, dw, db|null, N, in, out, gelu)
napi_value LinearBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 12, "span_native.linearBackward: bad buffer");
  size_t d[3] = {0, 0, 0};
  c.sizes(8, 3, d);
  const bool act = c.on(11);
  const size_t N = d[0], in = d[1], out = d[2];
  float *dy = c.f32(0, N * out), *x = c.f32(1, N * in), *w = c.f32(2, out * in), *z = c.f32(3, N * out, !act), *dz = c.f32(4, N * out, !act);
  float *dx = c.f32(5, N * in), *dw = c.f32(6, out * in), *db = c.f32(7, out, true);
  if (c.ok) span::linear_backward(dy, x, w, z, dz, dx, dw, db, N, in, out, act);
  return nullptr;
}

// layerNormForward(x, g, b, y, mean, rstd, rows, H, eps)
napi_value LayerNormForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 9, "span_native.layerNormForward: bad buffer");
  size_t d[2] = {0, 0};
  c.sizes(6, 2, d);
  const double eps = c.real(8);
  const size_t R = d[0], H = d[1];
  float *x = c.f32(0, R * H), *g = c.f32(1, H), *b = c.f32(2, H), *y = c.f32(3, R * H), *m = c.f32(4, R), *rs = c.f32(5, R);
  if (c.ok) span::layer_norm_forward(x, g, b, y, m, rs, R, H, static_cast<float>(eps));
  return nullptr;
}

// layerNormBackward(dy, x, g, mean, rstd, dx, dg, db, rows, H)
napi_value LayerNormBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 10, "span_native.layerNormBackward: bad buffer");
  size_t d[2] = {0, 0};
  c.sizes(8, 2, d);
  const size_t R = d[0], H = d[1];
  float *dy = c.f32(0, R * H), *x = c.f32(1, R * H), *g = c.f32(2, H), *m = c.f32(3, R), *rs = c.f32(4, R);
  float *dx = c.f32(5, R * H), *dg = c.f32(6, H), *db = c.f32(7, H);
  if (c.ok) span::layer_norm_backward(dy, x, g, m, rs, dx, dg, db, R, H);
  return nullptr;
}

// crossEntropyForward(logits, labels, lse, N, C) → Σ loss (NaN for a label out of range)
napi_value CrossEntropyForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 5, "span_native.crossEntropyForward: bad buffer");
  size_t d[2] = {0, 0};
  c.sizes(3, 2, d);
  float* x = c.f32(0, d[0] * d[1]);
  int32_t* y = c.i32(1, d[0]);
  float* lse = c.f32(2, d[0]);
  return c.ok ? number(env, span::cross_entropy_forward(x, y, lse, d[0], d[1])) : nullptr;
}

// crossEntropyBackward(logits, labels, lse, dy, dlogits, N, C)
napi_value CrossEntropyBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 7, "span_native.crossEntropyBackward: bad buffer");
  size_t d[2] = {0, 0};
  c.sizes(5, 2, d);
  const double dy = c.real(3);
  float* x = c.f32(0, d[0] * d[1]);
  int32_t* y = c.i32(1, d[0]);
  float *lse = c.f32(2, d[0]), *dx = c.f32(4, d[0] * d[1]);
  if (c.ok) span::cross_entropy_backward(x, y, lse, static_cast<float>(dy), dx, d[0], d[1]);
  return nullptr;
}

// attentionForward(q, k, v, mask, probs, ctx, B, T, A, d, scale, keep, seed)
napi_value AttentionForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 13, "span_native.attentionForward: bad buffer");
  size_t d[4] = {0, 0, 0, 0};
  c.sizes(6, 4, d);
  const double scale = c.real(10), keep = c.real(11), seed = c.real(12);
  const size_t B = d[0], T = d[1], A = d[2], D = d[3], n = B * T * A * D;
  float *q = c.f32(0, n), *k = c.f32(1, n), *v = c.f32(2, n), *m = c.f32(3, B * T), *p = c.f32(4, B * A * T * T), *ctx = c.f32(5, n);
  if (c.ok)
    span::attention_forward(q, k, v, m, p, ctx, B, T, A, D, static_cast<float>(scale), static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// attentionBackward(dctx, q, k, v, probs, dq, dk, dv, B, T, A, d, scale, keep, seed)
napi_value AttentionBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 15, "span_native.attentionBackward: bad buffer");
  size_t d[4] = {0, 0, 0, 0};
  c.sizes(8, 4, d);
  const double scale = c.real(12), keep = c.real(13), seed = c.real(14);
  const size_t B = d[0], T = d[1], A = d[2], D = d[3], n = B * T * A * D;
  float *dc = c.f32(0, n), *q = c.f32(1, n), *k = c.f32(2, n), *v = c.f32(3, n), *p = c.f32(4, B * A * T * T);
  float *dq = c.f32(5, n), *dk = c.f32(6, n), *dv = c.f32(7, n);
  if (c.ok)
    span::attention_backward(dc, q, k, v, p, dq, dk, dv, B, T, A, D, static_cast<float>(scale), static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// flashAttentionForward(q, k, v, mask, lse, ctx, B, T, A, d, scale, keep, seed): lse [B, A, T] in place of probs
napi_value FlashAttentionForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 13, "span_native.flashAttentionForward: bad buffer");
  size_t d[4] = {0, 0, 0, 0};
  c.sizes(6, 4, d);
  const double scale = c.real(10), keep = c.real(11), seed = c.real(12);
  const size_t B = d[0], T = d[1], A = d[2], D = d[3], n = B * T * A * D;
  float *q = c.f32(0, n), *k = c.f32(1, n), *v = c.f32(2, n), *m = c.f32(3, B * T), *lse = c.f32(4, B * A * T), *ctx = c.f32(5, n);
  if (c.ok)
    span::flash_attention_forward(q, k, v, m, lse, ctx, B, T, A, D, static_cast<float>(scale), static_cast<float>(keep),
                                  static_cast<uint64_t>(seed));
  return nullptr;
}

// flashAttentionBackward(dctx, q, k, v, mask, ctx, lse, dq, dk, dv, B, T, A, d, scale, keep, seed)
napi_value FlashAttentionBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 17, "span_native.flashAttentionBackward: bad buffer");
  size_t d[4] = {0, 0, 0, 0};
  c.sizes(10, 4, d);
  const double scale = c.real(14), keep = c.real(15), seed = c.real(16);
  const size_t B = d[0], T = d[1], A = d[2], D = d[3], n = B * T * A * D;
  float *dc = c.f32(0, n), *q = c.f32(1, n), *k = c.f32(2, n), *v = c.f32(3, n), *m = c.f32(4, B * T);
  float *ctx = c.f32(5, n), *lse = c.f32(6, B * A * T), *dq = c.f32(7, n), *dk = c.f32(8, n), *dv = c.f32(9, n);
  if (c.ok)
    span::flash_attention_backward(dc, q, k, v, m, ctx, lse, dq, dk, dv, B, T, A, D, static_cast<float>(scale),
                                   static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// residualLayerNormForward(x, w, b, residual, g, beta, s, y, mean, rstd, N, in, H, eps, keep, seed)
napi_value ResidualLayerNormForward(napi_env env, napi_callback_info info) {
  Call c(env, info, 16, "span_native.residualLayerNormForward: bad buffer");
  size_t d[3] = {0, 0, 0};
  c.sizes(10, 3, d);
  const double eps = c.real(13), keep = c.real(14), seed = c.real(15);
  const size_t N = d[0], I = d[1], H = d[2];
  float *x = c.f32(0, N * I), *w = c.f32(1, H * I), *b = c.f32(2, H), *r = c.f32(3, N * H), *g = c.f32(4, H);
  float *beta = c.f32(5, H), *s = c.f32(6, N * H), *y = c.f32(7, N * H), *mean = c.f32(8, N), *rstd = c.f32(9, N);
  if (c.ok)
    span::residual_layer_norm_forward(x, w, b, r, g, beta, s, y, mean, rstd, N, I, H, static_cast<float>(eps),
                                      static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// residualLayerNormBackward(dy, x, w, g, s, mean, rstd, ds, dz, dx, dw, db, dg, dbeta, N, in, H, keep, seed)
napi_value ResidualLayerNormBackward(napi_env env, napi_callback_info info) {
  Call c(env, info, 19, "span_native.residualLayerNormBackward: bad buffer");
  size_t d[3] = {0, 0, 0};
  c.sizes(14, 3, d);
  const double keep = c.real(17), seed = c.real(18);
  const size_t N = d[0], I = d[1], H = d[2];
  float *dy = c.f32(0, N * H), *x = c.f32(1, N * I), *w = c.f32(2, H * I), *g = c.f32(3, H), *s = c.f32(4, N * H);
  float *mean = c.f32(5, N), *rstd = c.f32(6, N), *ds = c.f32(7, N * H), *dz = c.f32(8, N * H, true), *dx = c.f32(9, N * I);  // dz: null without dropout
  float *dw = c.f32(10, H * I), *db = c.f32(11, H), *dg = c.f32(12, H), *dbeta = c.f32(13, H);
  if (c.ok && !dz && keep < 1) c.bad();
  if (c.ok)
    span::residual_layer_norm_backward(dy, x, w, g, s, mean, rstd, ds, dz, dx, dw, db, dg, dbeta, N, I, H,
                                       static_cast<float>(keep), static_cast<uint64_t>(seed));
  return nullptr;
}

// sumSquares([Float32Array, ...]) → Σ x² over all of them
napi_value SumSquares(napi_env env, napi_callback_info info) {
  Args a;
  if (!args(env, info, a, 1)) return nullptr;
  uint32_t n;
  CHECK(napi_get_array_length(env, a.v[0], &n));
  std::vector<const float*> xs(n);
  std::vector<size_t> ns(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value el;
    float* p;
    CHECK(napi_get_element(env, a.v[0], i, &el));
    CHECK(typed(env, el, &p, &ns[i]) ? napi_ok : napi_invalid_arg);
    xs[i] = p;
  }
  return number(env, span::sum_squares(xs.data(), ns.data(), n));
}

napi_value Init(napi_env env, napi_value exports) {
  span::blas_single_thread();
  const span_napi::Method methods[] = {
      {"info", Info},
      {"setThreads", SetThreads},
      {"poolCheck", PoolCheck},
      {"setPrecision", SetPrecision},
      {"matmul", MatMul},
      {"binary", Binary},
      {"unary", Unary},
      {"softmax", Softmax},
      {"reduce", Reduce},
      {"transpose", Transpose},
      {"gather", Gather},
      {"scatterAdd", ScatterAdd},
      {"dropout", Dropout},
      {"adamw", AdamW},
      {"linearForward", LinearForward},
      {"linearBackward", LinearBackward},
      {"layerNormForward", LayerNormForward},
      {"layerNormBackward", LayerNormBackward},
      {"crossEntropyForward", CrossEntropyForward},
      {"crossEntropyBackward", CrossEntropyBackward},
      {"attentionForward", AttentionForward},
      {"attentionBackward", AttentionBackward},
      {"flashAttentionForward", FlashAttentionForward},
      {"flashAttentionBackward", FlashAttentionBackward},
      {"residualLayerNormForward", ResidualLayerNormForward},
      {"residualLayerNormBackward", ResidualLayerNormBackward},
      {"sumSquares", SumSquares},
      {"setGemmPath", span_gemm_napi::SetGemmPath},
      {"toBf16", span_gemm_napi::ToBf16},
      {"gemmLd", span_gemm_napi::GemmLd},
      {"matmulBeta", span_gemm_napi::MatmulBeta},
      {"peak", span_gemm_napi::MeasurePeak},
      {"peakAll", span_gemm_napi::MeasurePeakAll},
  };
  span_napi::defineMethods(env, exports, methods);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
