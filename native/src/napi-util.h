// N-API helpers every addon of span shares (native/src: span_native, span_dist; native/cuda/src:
// span_cuda, which includes this file by its relative path): JavaScript values made from C++ ones
// and strings read back, a thrown error, and the exports object's methods from a {name, function} table.
#ifndef SPAN_NAPI_UTIL_H
#define SPAN_NAPI_UTIL_H

#include <node_api.h>

#include <cstddef>
#include <string>

namespace span_napi {

inline napi_value number(napi_env env, double x) {
  napi_value v;
  napi_create_double(env, x, &v);
  return v;
}

inline napi_value jsString(napi_env env, const std::string& s) {
  napi_value v;
  napi_create_string_utf8(env, s.c_str(), s.size(), &v);
  return v;
}

/** A JavaScript string as UTF-8 (an empty one for anything else). */
inline std::string stringOf(napi_env env, napi_value v) {
  size_t len = 0;
  napi_get_value_string_utf8(env, v, nullptr, 0, &len);
  std::string s(len, '\0');
  napi_get_value_string_utf8(env, v, &s[0], len + 1, &len);
  return s;
}

inline napi_value undef(napi_env env) {
  napi_value v;
  napi_get_undefined(env, &v);
  return v;
}

/** Throws `what` as an Error; nullptr, for a callback to return. */
inline napi_value fail(napi_env env, const std::string& what) {
  napi_throw_error(env, nullptr, what.c_str());
  return nullptr;
}

struct Method {
  const char* name;
  napi_callback fn;
};

/** Each {name, function} of `methods` as a method of `exports`. */
template <size_t N>
void defineMethods(napi_env env, napi_value exports, const Method (&methods)[N]) {
  napi_property_descriptor props[N];
  for (size_t i = 0; i < N; i++) props[i] = {methods[i].name, nullptr, methods[i].fn, nullptr, nullptr, nullptr, napi_default, nullptr};
  napi_define_properties(env, exports, N, props);
}

}  // namespace span_napi

#endif
