// Node-API functions about the matrix products: which path runs them, bf16 conversion (exposed
// for its bit-exactness tests), and the machine's measured peak (bench/gemm.mjs, doctor).
#include "addon_gemm.h"

#include <algorithm>
#include <string>

#include "bf16.h"
#include "gemm.h"
#include "gemm_dnnl.h"
#include "napi-util.h"
#include "peak.h"

namespace span_gemm_napi {

using span_napi::jsString;
using span_napi::number;

namespace {

void set(napi_env env, napi_value o, const char* key, napi_value v) { napi_set_named_property(env, o, key, v); }

/** The paths this build has, in the default's order (gemm.h). */
napi_value paths(napi_env env) {
  napi_value arr;
  napi_create_array(env, &arr);
  uint32_t n = 0;
  for (span::GemmPath p : {span::GemmPath::onednn, span::GemmPath::avx512, span::GemmPath::blas, span::GemmPath::builtin}) {
    span::GemmPath was = span::gemm_path();
    if (!span::set_gemm_path(p)) continue;
    span::set_gemm_path(was);
    napi_set_element(env, arr, n++, jsString(env, span::gemm_path_name(p)));
  }
  return arr;
}

/** v as a Float32Array of at least `need` elements into *out; false otherwise. */
bool f32(napi_env env, napi_value v, size_t need, float** out) {
  napi_typedarray_type t;
  size_t n = 0;
  void* p = nullptr;
  if (napi_get_typedarray_info(env, v, &t, &n, &p, nullptr, nullptr) != napi_ok || t != napi_float32_array || n < need) return false;
  *out = static_cast<float*>(p);
  return true;
}

/** argv[from..from+n) as sizes (non-negative integers) or flags; false on anything else. */
bool sizes(napi_env env, const napi_value* argv, size_t n, size_t* out) {
  for (size_t i = 0; i < n; i++) {
    napi_valuetype t;
    napi_typeof(env, argv[i], &t);
    if (t == napi_boolean) {
      bool b;
      napi_get_value_bool(env, argv[i], &b);
      out[i] = b;
      continue;
    }
    double d;
    if (napi_get_value_double(env, argv[i], &d) != napi_ok || !(d >= 0) || d != (double)(size_t)d) return false;
    out[i] = static_cast<size_t>(d);
  }
  return true;
}

}  // namespace

napi_value GemmLd(napi_env env, napi_callback_info info) {
  size_t argc = 12, s[9];
  napi_value argv[12];
  const char* usage = "span_native.gemmLd: (a, b, c, transA, transB, M, N, K, lda, ldb, ldc, beta)";
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 12 || !sizes(env, argv + 3, 9, s))
    return span_napi::fail(env, usage);
  bool ta = s[0], tb = s[1];
  size_t M = s[2], N = s[3], K = s[4], lda = s[5], ldb = s[6], ldc = s[7], beta = s[8];
  float *a, *b, *c;
  if (!f32(env, argv[0], ta ? (K ? (K - 1) * lda + M : 0) : (M ? (M - 1) * lda + K : 0), &a) ||
      !f32(env, argv[1], tb ? (N ? (N - 1) * ldb + K : 0) : (K ? (K - 1) * ldb + N : 0), &b) ||
      !f32(env, argv[2], M ? (M - 1) * ldc + N : 0, &c) || beta > 1 || lda < (ta ? M : K) || ldb < (tb ? K : N) || ldc < N)
    return span_napi::fail(env, usage);
  span::gemm_ld(ta, tb, M, N, K, a, lda, b, ldb, c, ldc, static_cast<float>(beta));
  return nullptr;
}

napi_value MatmulBeta(napi_env env, napi_callback_info info) {
  size_t argc = 11, s[8];
  napi_value argv[11];
  const char* usage = "span_native.matmulBeta: (a, b, c, batchA, batchB, M, N, K, transA, transB, beta)";
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 11 || !sizes(env, argv + 3, 8, s))
    return span_napi::fail(env, usage);
  size_t bA = s[0], bB = s[1], M = s[2], N = s[3], K = s[4], beta = s[7];
  float *a, *b, *c;
  if (!f32(env, argv[0], bA * M * K, &a) || !f32(env, argv[1], bB * K * N, &b) || !f32(env, argv[2], std::max(bA, bB) * M * N, &c) ||
      beta > 1 || (bA != bB && bA != 1 && bB != 1))
    return span_napi::fail(env, usage);
  span::batch_matmul(a, b, c, bA, bB, M, N, K, s[5], s[6], static_cast<float>(beta));
  return nullptr;
}

void addInfo(napi_env env, napi_value info) {
  set(env, info, "gemm", jsString(env, span::gemm_description()));
  set(env, info, "gemmIsa", jsString(env, span::gemm_isa()));
  set(env, info, "gemmPath", jsString(env, span::gemm_path_name(span::gemm_path())));
  set(env, info, "gemmPaths", paths(env));
  napi_value impl;
  napi_create_object(env, &impl);
  set(env, impl, "fp32", jsString(env, span::dnnl_impl_name(false)));
  set(env, impl, "bf16", jsString(env, span::dnnl_impl_name(true)));
  set(env, info, "gemmImpl", impl);
  set(env, info, "gemmFallbacks", number(env, static_cast<double>(span::gemm_fallbacks())));
  set(env, info, "bf16", jsString(env, span::bf16_capability()));
  // span's avx512 kernel rounds as it packs (bf16.h round16, AVX-512 integer ops); the others convert first (to_bf16)
  bool packs = span::gemm_path() == span::GemmPath::avx512;
  set(env, info, "bf16Convert", jsString(env, packs ? "avx512bw, as the operands are packed" : span::to_bf16_isa()));
}

napi_value SetGemmPath(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1) return span_napi::fail(env, "span_native.setGemmPath: a path name");
  std::string name = span_napi::stringOf(env, argv[0]);
  bool ok = false;
  if (name == "avx512") ok = span::set_gemm_path(span::GemmPath::avx512);
  else if (name == "onednn") ok = span::set_gemm_path(span::GemmPath::onednn);
  else if (name == "blas") ok = span::set_gemm_path(span::GemmPath::blas);
  else if (name == "builtin") ok = span::set_gemm_path(span::GemmPath::builtin);
  else return span_napi::fail(env, "span_native.setGemmPath: avx512, onednn, blas or builtin, not " + name);
  napi_value r;
  napi_get_boolean(env, ok, &r);
  return r;
}

napi_value ToBf16(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  napi_typedarray_type tx, to;
  size_t nx = 0, no = 0;
  void *px = nullptr, *po = nullptr;
  bool scalar = false;
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 3 ||
      napi_get_typedarray_info(env, argv[0], &tx, &nx, &px, nullptr, nullptr) != napi_ok ||
      napi_get_typedarray_info(env, argv[1], &to, &no, &po, nullptr, nullptr) != napi_ok ||
      napi_get_value_bool(env, argv[2], &scalar) != napi_ok || tx != napi_float32_array || to != napi_uint16_array || no < nx)
    return span_napi::fail(env, "span_native.toBf16: (Float32Array, Uint16Array of at least its length, boolean)");
  (scalar ? span::to_bf16_scalar : span::to_bf16)(static_cast<float*>(px), static_cast<uint16_t*>(po), nx);
  return nullptr;
}

napi_value MeasurePeak(napi_env env, napi_callback_info) {
  span::Peak p = span::measure_peak();
  napi_value o;
  napi_create_object(env, &o);
  set(env, o, "ghz", number(env, p.ghz));
  set(env, o, "fmaLatency", number(env, p.fma_latency));
  set(env, o, "fp32PerCycle", number(env, p.fp32_per_cycle));
  set(env, o, "bf16PerCycle", number(env, p.bf16_per_cycle));
  set(env, o, "vectorBits", number(env, p.vector_bits));
  return o;
}

napi_value MeasurePeakAll(napi_env env, napi_callback_info) {
  span::PeakAll p = span::measure_peak_all();
  napi_value o;
  napi_create_object(env, &o);
  set(env, o, "fp32", number(env, p.fp32));
  set(env, o, "bf16", number(env, p.bf16));
  set(env, o, "threads", number(env, p.threads));
  return o;
}

}  // namespace span_gemm_napi
