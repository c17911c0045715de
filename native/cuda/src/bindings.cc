// Node-API bindings of the device runtime (device.h) for src/core/engine/cuda/device.ts. Device
// pointers travel as JS numbers (exact below 2^53, which every x86-64 and GPU address is).
// Errors are thrown as JS errors with the runtime's one line.
#include <node_api.h>

#include <string>
#include <vector>

#include "../../src/napi-util.h"
#include "device.h"
#include "loader.h"

namespace {

using span_napi::number;
using span_napi::stringOf;
using span_napi::undef;

using span_cuda::deviceOpen;

/** Throws `e` when non-empty; true when it threw. */
bool fail(napi_env env, const std::string& e) {
  if (e.empty()) return false;
  napi_throw_error(env, nullptr, e.c_str());
  return true;
}

struct Args {
  size_t argc = 8;
  napi_value argv[8];
  Args(napi_env env, napi_callback_info info) { napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr); }
};

double num(napi_env env, napi_value v) {
  double d = 0;
  napi_get_value_double(env, v, &d);
  return d;
}

std::vector<double> nums(napi_env env, napi_value arr) {
  uint32_t n = 0;
  napi_get_array_length(env, arr, &n);
  std::vector<double> out(n);
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    napi_get_element(env, arr, i, &v);
    out[i] = num(env, v);
  }
  return out;
}

std::vector<std::string> strs(napi_env env, napi_value arr) {
  uint32_t n = 0;
  napi_get_array_length(env, arr, &n);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < n; i++) {
    napi_value v;
    napi_get_element(env, arr, i, &v);
    out.push_back(stringOf(env, v));
  }
  return out;
}

/** Bytes of a TypedArray or ArrayBuffer argument. */
void* bytesOf(napi_env env, napi_value v, size_t* len) {
  bool isTyped = false;
  napi_is_typedarray(env, v, &isTyped);
  void* data = nullptr;
  if (isTyped) {
    napi_typedarray_type t;
    size_t n = 0, off = 0;
    napi_value ab;
    napi_get_typedarray_info(env, v, &t, &n, &data, &ab, &off);
    size_t elem = (t == napi_int8_array || t == napi_uint8_array || t == napi_uint8_clamped_array) ? 1 : (t == napi_int16_array || t == napi_uint16_array) ? 2 : (t == napi_float64_array || t == napi_bigint64_array || t == napi_biguint64_array) ? 8 : 4;
    *len = n * elem;
    return data;
  }
  napi_get_arraybuffer_info(env, v, &data, len);
  return data;
}

/** open({cuda, nvrtcBuiltins, nvrtc, cublasLt}: candidates, ordinal) → arch (e.g. 80). */
napi_value Open(napi_env env, napi_callback_info info) {
  Args a(env, info);
  auto lib = [&](const char* name) {
    napi_value v;
    napi_get_named_property(env, a.argv[0], name, &v);
    return span_cuda::openFirst(strs(env, v));
  };
  auto cu = lib("cuda");
  lib("nvrtcBuiltins");
  auto nvrtc = lib("nvrtc");
  auto lt = lib("cublasLt");
  if (!cu.handle) return fail(env, "no NVIDIA driver (" + cu.error + ")"), nullptr;
  if (!nvrtc.handle) return fail(env, "libnvrtc is not found (" + nvrtc.error + ")"), nullptr;
  if (!lt.handle) return fail(env, "libcublasLt is not found (" + lt.error + ")"), nullptr;
  if (fail(env, deviceOpen(cu.handle, nvrtc.handle, lt.handle, static_cast<int>(num(env, a.argv[1]))))) return nullptr;
  return number(env, span_cuda::deviceArch());
}

napi_value Alloc(napi_env env, napi_callback_info info) {
  Args a(env, info);
  uint64_t p = 0;
  if (fail(env, span_cuda::deviceAlloc(static_cast<size_t>(num(env, a.argv[0])), &p))) return nullptr;
  return number(env, static_cast<double>(p));
}

napi_value Free(napi_env env, napi_callback_info info) {
  Args a(env, info);
  fail(env, span_cuda::deviceFree(static_cast<uint64_t>(num(env, a.argv[0]))));
  return undef(env);
}

napi_value EmptyCache(napi_env env, napi_callback_info) {
  fail(env, span_cuda::deviceEmptyCache());
  return undef(env);
}

napi_value Stats(napi_env env, napi_callback_info) {
  auto s = span_cuda::deviceStats();
  napi_value o;
  napi_create_object(env, &o);
  napi_set_named_property(env, o, "liveBytes", number(env, s.liveBytes));
  napi_set_named_property(env, o, "peakBytes", number(env, s.peakBytes));
  napi_set_named_property(env, o, "cachedBytes", number(env, s.cachedBytes));
  napi_set_named_property(env, o, "liveBlocks", number(env, s.liveBlocks));
  napi_set_named_property(env, o, "deviceBytes", number(env, s.deviceBytes));
  return o;
}

napi_value ResetPeak(napi_env env, napi_callback_info) {
  span_cuda::deviceResetPeak();
  return undef(env);
}

/** upload(ptr, typedArray): H2D on the stream (the source is staged before the call returns). */
napi_value Upload(napi_env env, napi_callback_info info) {
  Args a(env, info);
  size_t len = 0;
  void* src = bytesOf(env, a.argv[1], &len);
  fail(env, span_cuda::deviceUpload(static_cast<uint64_t>(num(env, a.argv[0])), src, len));
  return undef(env);
}

/** downloadSync(ptr, typedArray): D2H into it, then the stream synchronised. */
napi_value DownloadSync(napi_env env, napi_callback_info info) {
  Args a(env, info);
  size_t len = 0;
  void* dst = bytesOf(env, a.argv[1], &len);
  fail(env, span_cuda::deviceDownloadSync(dst, static_cast<uint64_t>(num(env, a.argv[0])), len));
  return undef(env);
}

napi_value Copy(napi_env env, napi_callback_info info) {
  Args a(env, info);
  fail(env, span_cuda::deviceCopy(static_cast<uint64_t>(num(env, a.argv[0])), static_cast<uint64_t>(num(env, a.argv[1])), static_cast<size_t>(num(env, a.argv[2]))));
  return undef(env);
}

napi_value MemsetD32(napi_env env, napi_callback_info info) {
  Args a(env, info);
  fail(env, span_cuda::deviceMemsetD32(static_cast<uint64_t>(num(env, a.argv[0])), static_cast<uint32_t>(num(env, a.argv[1])), static_cast<size_t>(num(env, a.argv[2]))));
  return undef(env);
}

napi_value Sync(napi_env env, napi_callback_info) {
  fail(env, span_cuda::deviceSync());
  return undef(env);
}

/** readStart(ptr, bytes) → id of an async read (pinned buffer + event). */
napi_value ReadStart(napi_env env, napi_callback_info info) {
  Args a(env, info);
  int id = 0;
  if (fail(env, span_cuda::deviceReadStart(static_cast<uint64_t>(num(env, a.argv[0])), static_cast<size_t>(num(env, a.argv[1])), &id))) return nullptr;
  return number(env, id);
}

/** readPoll(id, typedArray) → true once the bytes are in it (the read is then released). */
napi_value ReadPoll(napi_env env, napi_callback_info info) {
  Args a(env, info);
  size_t len = 0;
  void* dst = bytesOf(env, a.argv[1], &len);
  int done = 0;
  if (fail(env, span_cuda::deviceReadPoll(static_cast<int>(num(env, a.argv[0])), dst, &done))) return nullptr;
  napi_value v;
  napi_get_boolean(env, done != 0, &v);
  return v;
}

/** loadModule(source, name, options[]) → module index. */
napi_value LoadModule(napi_env env, napi_callback_info info) {
  Args a(env, info);
  int m = 0;
  if (fail(env, span_cuda::deviceLoadModule(stringOf(env, a.argv[0]), stringOf(env, a.argv[1]), strs(env, a.argv[2]), &m))) return nullptr;
  return number(env, m);
}

napi_value GetFunction(napi_env env, napi_callback_info info) {
  Args a(env, info);
  int f = 0;
  if (fail(env, span_cuda::deviceGetFunction(static_cast<int>(num(env, a.argv[0])), stringOf(env, a.argv[1]), &f))) return nullptr;
  return number(env, f);
}

/** launch(fn, grid[3], block[3], sharedBytes, types, values[]). */
napi_value Launch(napi_env env, napi_callback_info info) {
  Args a(env, info);
  auto g = nums(env, a.argv[1]), b = nums(env, a.argv[2]);
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  for (size_t i = 0; i < 3 && i < g.size(); i++) grid[i] = static_cast<unsigned>(g[i]);
  for (size_t i = 0; i < 3 && i < b.size(); i++) block[i] = static_cast<unsigned>(b[i]);
  fail(env, span_cuda::deviceLaunch(static_cast<int>(num(env, a.argv[0])), grid, block, static_cast<unsigned>(num(env, a.argv[3])), stringOf(env, a.argv[4]), nums(env, a.argv[5])));
  return undef(env);
}

/** A cuBLASLt operand from 5 numbers at v[i]: ptr, rows, cols, ld, stride. */
span_cuda::Operand operand(const std::vector<double>& v, size_t i) {
  span_cuda::Operand o;
  o.ptr = static_cast<uint64_t>(v[i]), o.rows = static_cast<uint64_t>(v[i + 1]), o.cols = static_cast<uint64_t>(v[i + 2]);
  o.ld = static_cast<int64_t>(v[i + 3]), o.stride = static_cast<int64_t>(v[i + 4]);
  return o;
}

/**
 * gemm([transA, transB, precision (0 fp32, 1 tf32, 2 bf16 A and B, 3 fp16 A and B), batch, alpha, beta, A: ptr rows cols ld stride, B: …, C: …]) (21 numbers),
 * optionally followed by [epilogue (a CUBLASLT_EPILOGUE_* value; 0 or 1: none), bias ptr, aux ptr, aux ld] (25).
 */
napi_value Gemm(napi_env env, napi_callback_info info) {
  Args a(env, info);
  auto v = nums(env, a.argv[0]);
  if (v.size() != 21 && v.size() != 25) return fail(env, "span cuda: gemm takes 21 or 25 numbers"), nullptr;
  span_cuda::Gemm g;
  g.transA = v[0] != 0, g.transB = v[1] != 0, g.tf32 = v[2] == 1, g.bf16 = v[2] == 2, g.fp16 = v[2] == 3;
  g.batch = static_cast<int>(v[3]), g.alpha = static_cast<float>(v[4]), g.beta = static_cast<float>(v[5]);
  g.A = operand(v, 6), g.B = operand(v, 11), g.C = operand(v, 16);
  if (v.size() == 25 && v[21] > 1) {
    g.epilogue = static_cast<uint32_t>(v[21]);
    g.bias = static_cast<uint64_t>(v[22]), g.aux = static_cast<uint64_t>(v[23]), g.auxLd = static_cast<int64_t>(v[24]);
  }
  fail(env, span_cuda::deviceGemm(g));
  return undef(env);
}

}  // namespace

void defineDevice(napi_env env, napi_value exports) {
  const span_napi::Method methods[] = {
      {"open", Open},
      {"alloc", Alloc},
      {"free", Free},
      {"emptyCache", EmptyCache},
      {"stats", Stats},
      {"resetPeak", ResetPeak},
      {"upload", Upload},
      {"downloadSync", DownloadSync},
      {"copy", Copy},
      {"memsetD32", MemsetD32},
      {"sync", Sync},
      {"readStart", ReadStart},
      {"readPoll", ReadPoll},
      {"loadModule", LoadModule},
      {"getFunction", GetFunction},
      {"launch", Launch},
      {"gemm", Gemm},
  };
  span_napi::defineMethods(env, exports, methods);
}
