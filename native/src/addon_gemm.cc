// Node-API functions about the matrix products: which path runs them, bf16 conversion (exposed
// for its bit-exactness tests), and the machine's measured peak (bench/gemm.mjs, doctor).
#include "addon_gemm.h"

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

/** The paths this build has, fastest first. */
napi_value paths(napi_env env) {
  napi_value arr;
  napi_create_array(env, &arr);
  uint32_t n = 0;
  for (span::GemmPath p : {span::GemmPath::onednn, span::GemmPath::blas, span::GemmPath::builtin}) {
    span::GemmPath was = span::gemm_path();
    if (!span::set_gemm_path(p)) continue;
    span::set_gemm_path(was);
    napi_set_element(env, arr, n++, jsString(env, span::gemm_path_name(p)));
  }
  return arr;
}

}  // namespace

void addInfo(napi_env env, napi_value info) {
  set(env, info, "gemm", jsString(env, span::gemm_description()));
  set(env, info, "gemmPath", jsString(env, span::gemm_path_name(span::gemm_path())));
  set(env, info, "gemmPaths", paths(env));
  napi_value impl;
  napi_create_object(env, &impl);
  set(env, impl, "fp32", jsString(env, span::dnnl_impl_name(false)));
  set(env, impl, "bf16", jsString(env, span::dnnl_impl_name(true)));
  set(env, info, "gemmImpl", impl);
  set(env, info, "bf16", jsString(env, span::bf16_capability()));
  set(env, info, "bf16Convert", jsString(env, span::to_bf16_isa()));
}

napi_value SetGemmPath(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc < 1) return span_napi::fail(env, "span_native.setGemmPath: a path name");
  std::string name = span_napi::stringOf(env, argv[0]);
  bool ok = false;
  if (name == "onednn") ok = span::set_gemm_path(span::GemmPath::onednn);
  else if (name == "blas") ok = span::set_gemm_path(span::GemmPath::blas);
  else if (name == "builtin") ok = span::set_gemm_path(span::GemmPath::builtin);
  else return span_napi::fail(env, "span_native.setGemmPath: onednn, blas or builtin, not " + name);
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

}  // namespace span_gemm_napi
