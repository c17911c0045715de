// NCCL on the cuda backend's device (src/core/dist/nccl-device.ts): libnccl.so.2 opened with
// dlopen (nccl-abi.h's prototypes, no NCCL headers at build time), one communicator made from
// the unique id rank 0 broadcast over MPI, and collectives enqueued on the backend's one stream
// (state().stream), so that they run in order with the kernels and nothing waits on the host.
#include <dlfcn.h>
#include <node_api.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "../../src/napi-util.h"
#include "graph.h"
#include "nccl-abi.h"
#include "state.h"

void defineNccl(napi_env env, napi_value exports);

namespace {

using span_napi::fail;
using span_napi::undef;

struct Nccl {
  void* lib = nullptr;
  SPAN_ncclComm_t comm = nullptr;
  span_ncclGetVersion_t getVersion = nullptr;
  span_ncclCommInitRank_t initRank = nullptr;
  span_ncclCommDestroy_t destroy = nullptr;
  span_ncclGetErrorString_t errorString = nullptr;
  span_ncclGetLastError_t lastError = nullptr;  // NCCL ≥ 2.13; optional
  span_ncclAllReduce_t allReduce = nullptr;
  span_ncclBroadcast_t broadcast = nullptr;
  span_ncclGroupStart_t groupStart = nullptr;
  span_ncclGroupEnd_t groupEnd = nullptr;
} nccl;

/** "API: NCCL's name for rc (its last error)" for a failed call. */
std::string why(const char* api, SPAN_ncclResult_t rc) {
  std::string s = std::string(api) + ": " + (nccl.errorString ? nccl.errorString(rc) : "error " + std::to_string(rc));
  const char* last = nccl.lastError ? nccl.lastError(nccl.comm) : nullptr;
  if (last && *last) s += std::string(" (") + last + ")";
  return s;
}

struct Args {
  size_t argc = 6;
  napi_value argv[6];
  Args(napi_env env, napi_callback_info info) { napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr); }
  double num(napi_env env, size_t i) const {
    double d = 0;
    if (i < argc) napi_get_value_double(env, argv[i], &d);
    return d;
  }
};

template <class F>
bool need(void* lib, const char* name, F* out, std::string& missing) {
  *out = reinterpret_cast<F>(dlsym(lib, name));
  if (!*out && missing.empty()) missing = name;
  return *out != nullptr;
}

/** dlopen and dlsym of every entry point; "" or why not. */
std::string bind(const std::string& path) {
  if (nccl.lib) return "";
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = dlerror();
    return e ? e : path + ": dlopen failed";
  }
  std::string missing;
  need(lib, "ncclGetVersion", &nccl.getVersion, missing);
  need(lib, "ncclCommInitRank", &nccl.initRank, missing);
  need(lib, "ncclCommDestroy", &nccl.destroy, missing);
  need(lib, "ncclGetErrorString", &nccl.errorString, missing);
  need(lib, "ncclAllReduce", &nccl.allReduce, missing);
  need(lib, "ncclBroadcast", &nccl.broadcast, missing);
  need(lib, "ncclGroupStart", &nccl.groupStart, missing);
  need(lib, "ncclGroupEnd", &nccl.groupEnd, missing);
  nccl.lastError = reinterpret_cast<span_ncclGetLastError_t>(dlsym(lib, "ncclGetLastError"));
  if (!missing.empty()) {
    dlclose(lib);
    return path + ": missing symbol " + missing + " (not NCCL 2.x)";
  }
  nccl.lib = lib;
  return "";
}

/** ncclOpen(path, uniqueId: Uint8Array(128), nranks, rank) → NCCL's version; the device must be open (its context current). */
napi_value Open(napi_env env, napi_callback_info info) {
  Args a(env, info);
  if (!span_cuda::state().open) return fail(env, "NCCL: the cuda backend's device is not open");
  if (nccl.comm) return fail(env, "NCCL: a communicator is already open in this process");
  size_t len = 0;
  napi_get_value_string_utf8(env, a.argv[0], nullptr, 0, &len);
  std::string path(len, '\0');
  napi_get_value_string_utf8(env, a.argv[0], &path[0], len + 1, &len);
  std::string e = bind(path);
  if (!e.empty()) return fail(env, e);
  napi_typedarray_type t;
  size_t n = 0, off = 0;
  void* data = nullptr;
  napi_value ab;
  if (napi_get_typedarray_info(env, a.argv[1], &t, &n, &data, &ab, &off) != napi_ok || n != SPAN_NCCL_UNIQUE_ID_BYTES) return fail(env, "NCCL: the unique id must be 128 bytes");
  SPAN_ncclUniqueId id;
  memcpy(id.internal, data, SPAN_NCCL_UNIQUE_ID_BYTES);
  SPAN_ncclResult_t rc = nccl.initRank(&nccl.comm, static_cast<int>(a.num(env, 2)), id, static_cast<int>(a.num(env, 3)));
  if (rc != SPAN_ncclSuccess) {
    nccl.comm = nullptr;
    return fail(env, why("ncclCommInitRank", rc));
  }
  int version = 0;
  nccl.getVersion(&version);
  napi_value v;
  napi_create_int32(env, version, &v);
  return v;
}

/** ncclAllReduce(send, recv, count, average): float32 sum (ncclAvg when average) on the stream. */
napi_value AllReduce(napi_env env, napi_callback_info info) {
  Args a(env, info);
  if (!nccl.comm) return fail(env, "NCCL: no communicator");
  // not on a graph's tape: the step's recorded work is issued first (in order), the rest runs eagerly
  if (std::string e = span_cuda::graphBreak("an NCCL collective"); !e.empty()) return fail(env, e);
  bool avg = false;
  if (a.argc > 3) napi_get_value_bool(env, a.argv[3], &avg);
  auto* send = reinterpret_cast<const void*>(static_cast<uintptr_t>(a.num(env, 0)));
  auto* recv = reinterpret_cast<void*>(static_cast<uintptr_t>(a.num(env, 1)));
  auto stream = reinterpret_cast<SPAN_ncclStream_t>(span_cuda::state().stream);
  SPAN_ncclResult_t rc = nccl.allReduce(send, recv, static_cast<size_t>(a.num(env, 2)), SPAN_ncclFloat32, avg ? SPAN_ncclAvg : SPAN_ncclSum, nccl.comm, stream);
  return rc == SPAN_ncclSuccess ? undef(env) : fail(env, why("ncclAllReduce", rc));
}

/** ncclBroadcast(send, recv, count, root): float32 (4-byte elements) from root's send to every recv, on the stream. */
napi_value Broadcast(napi_env env, napi_callback_info info) {
  Args a(env, info);
  if (!nccl.comm) return fail(env, "NCCL: no communicator");
  // not on a graph's tape: the step's recorded work is issued first (in order), the rest runs eagerly
  if (std::string e = span_cuda::graphBreak("an NCCL collective"); !e.empty()) return fail(env, e);
  auto* send = reinterpret_cast<const void*>(static_cast<uintptr_t>(a.num(env, 0)));
  auto* recv = reinterpret_cast<void*>(static_cast<uintptr_t>(a.num(env, 1)));
  auto stream = reinterpret_cast<SPAN_ncclStream_t>(span_cuda::state().stream);
  SPAN_ncclResult_t rc = nccl.broadcast(send, recv, static_cast<size_t>(a.num(env, 2)), SPAN_ncclFloat32, static_cast<int>(a.num(env, 3)), nccl.comm, stream);
  return rc == SPAN_ncclSuccess ? undef(env) : fail(env, why("ncclBroadcast", rc));
}

/** ncclGroup(true) = ncclGroupStart, ncclGroup(false) = ncclGroupEnd (the grouped collectives are issued then). */
napi_value Group(napi_env env, napi_callback_info info) {
  Args a(env, info);
  if (!nccl.comm) return fail(env, "NCCL: no communicator");
  bool start = false;
  napi_get_value_bool(env, a.argv[0], &start);
  SPAN_ncclResult_t rc = start ? nccl.groupStart() : nccl.groupEnd();
  return rc == SPAN_ncclSuccess ? undef(env) : fail(env, why(start ? "ncclGroupStart" : "ncclGroupEnd", rc));
}

/** ncclClose(): ncclCommDestroy (local; after the stream's last collective is issued). */
napi_value Close(napi_env env, napi_callback_info) {
  if (!nccl.comm) return undef(env);
  SPAN_ncclComm_t c = nccl.comm;
  nccl.comm = nullptr;
  SPAN_ncclResult_t rc = nccl.destroy(c);
  return rc == SPAN_ncclSuccess ? undef(env) : fail(env, why("ncclCommDestroy", rc));
}

}  // namespace

void defineNccl(napi_env env, napi_value exports) {
  const span_napi::Method methods[] = {
      {"ncclOpen", Open},
      {"ncclAllReduce", AllReduce},
      {"ncclBroadcast", Broadcast},
      {"ncclGroup", Group},
      {"ncclClose", Close},
  };
  span_napi::defineMethods(env, exports, methods);
}
