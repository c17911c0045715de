// Node-API entry points of span's cuda addon (src/core/engine/cuda/): it opens the CUDA
// libraries the TypeScript side found (src/core/engine/cuda/libs.ts) and queries the device.
// Built with no CUDA headers, nvcc or GPU: see abi.h. The device runtime the tfjs backend
// (src/core/engine/cuda/backend.ts) uses is device.h, bound in bindings.cc.
#include <node_api.h>

#include <string>
#include <vector>

#include "loader.h"

void defineDevice(napi_env env, napi_value exports);  // bindings.cc
void defineGraph(napi_env env, napi_value exports);   // graph.cc
void defineNccl(napi_env env, napi_value exports);    // nccl.cc

namespace {

constexpr int kAbi = 2;  // src/core/engine/cuda/addon.ts CUDA_ABI

std::vector<std::string> strings(napi_env env, napi_value arr) {
  std::vector<std::string> out;
  uint32_t n = 0;
  if (napi_get_array_length(env, arr, &n) != napi_ok) return out;
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    size_t len = 0;
    napi_get_element(env, arr, i, &v);
    if (napi_get_value_string_utf8(env, v, nullptr, 0, &len) != napi_ok) continue;
    std::string s(len, '\0');
    napi_get_value_string_utf8(env, v, &s[0], len + 1, &len);
    out.push_back(s);
  }
  return out;
}

std::vector<std::string> field(napi_env env, napi_value obj, const char* name) {
  napi_value v;
  bool has = false;
  if (napi_has_named_property(env, obj, name, &has) != napi_ok || !has) return {};
  napi_get_named_property(env, obj, name, &v);
  return strings(env, v);
}

void set(napi_env env, napi_value obj, const char* key, const std::string& s) {
  napi_value v;
  napi_create_string_utf8(env, s.c_str(), s.size(), &v);
  napi_set_named_property(env, obj, key, v);
}

void set(napi_env env, napi_value obj, const char* key, double d) {
  napi_value v;
  napi_create_double(env, d, &v);
  napi_set_named_property(env, obj, key, v);
}

/** {path, error} of one library after openFirst. */
span_cuda::Opened open(napi_env env, napi_value result, napi_value cands, const char* name) {
  span_cuda::Opened o = span_cuda::openFirst(field(env, cands, name));
  napi_value lib;
  napi_create_object(env, &lib);
  set(env, lib, "path", o.path);
  set(env, lib, "error", o.error);
  napi_set_named_property(env, result, name, lib);
  return o;
}

void setDevice(napi_env env, napi_value result, const span_cuda::DeviceInfo& d) {
  set(env, result, "error", d.error);
  set(env, result, "driverVersion", d.driverVersion);
  set(env, result, "deviceCount", d.deviceCount);
  set(env, result, "name", d.name);
  set(env, result, "totalMem", static_cast<double>(d.totalMem));
  set(env, result, "freeMem", static_cast<double>(d.freeMem));
  set(env, result, "ccMajor", d.ccMajor);
  set(env, result, "ccMinor", d.ccMinor);
  set(env, result, "smCount", d.smCount);
}

/**
 * probe({cuda, nvrtcBuiltins, nvrtc, cublasLt}: candidate paths each, ordinal) → {cuda:
 * {path, error}, …, error, driverVersion, deviceCount, name, totalMem, freeMem, ccMajor,
 * ccMinor, smCount, nvrtcVersion, cublasLtVersion}. libnvrtc-builtins is opened before libnvrtc.
 */
napi_value Probe(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr);
  int32_t ordinal = 0;
  if (argc < 1 || (argc > 1 && napi_get_value_int32(env, argv[1], &ordinal) != napi_ok)) {
    napi_throw_error(env, nullptr, "span_cuda: probe(candidates, ordinal)");
    return nullptr;
  }
  napi_value result;
  napi_create_object(env, &result);
  span_cuda::Opened cuda = open(env, result, argv[0], "cuda");
  open(env, result, argv[0], "nvrtcBuiltins");
  span_cuda::Opened nvrtc = open(env, result, argv[0], "nvrtc");
  span_cuda::Opened lt = open(env, result, argv[0], "cublasLt");
  span_cuda::DeviceInfo d;
  if (!cuda.handle) d.error = "no NVIDIA driver (" + cuda.error + ")";
  else d = span_cuda::queryDevice(cuda.handle, ordinal);
  setDevice(env, result, d);
  set(env, result, "nvrtcVersion", span_cuda::nvrtcVersion(nvrtc.handle));
  set(env, result, "cublasLtVersion", static_cast<double>(span_cuda::cublasLtVersion(lt.handle)));
  return result;
}

napi_value Abi(napi_env env, napi_callback_info) {
  napi_value v;
  napi_create_int32(env, kAbi, &v);
  return v;
}

napi_value Init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"probe", nullptr, Probe, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"abi", nullptr, Abi, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props);
  defineDevice(env, exports);
  defineGraph(env, exports);
  defineNccl(env, exports);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
