// The cuda backend's device runtime (device.h): context, stream, caching allocator, copies and
// async reads. Modules and launches are in kernels.cc, cuBLASLt in gemm.cc; they share State.
#include "device.h"

#include <dlfcn.h>

#include <cstring>
#include <map>
#include <unordered_map>

#include "abi.h"
#include "graph.h"
#include "state.h"

namespace span_cuda {

State& state() {
  static State s;
  return s;
}

std::string cuError(const char* api, SPAN_CUresult r) {
  if (r == SPAN_CUDA_SUCCESS) return "";
  const char* name = nullptr;
  const char* text = nullptr;
  State& s = state();
  if (s.cuGetErrorName) s.cuGetErrorName(r, &name);
  if (s.cuGetErrorString) s.cuGetErrorString(r, &text);
  return std::string(api) + ": " + (name ? name : "CUresult " + std::to_string(r)) + (text ? std::string(" (") + text + ")" : "");
}

namespace {

/** dlsym of every driver entry point; the name of the first missing one, or "". */
std::string bindDriver(void* lib, State& s) {
  SPAN_BIND(cuInit, "cuInit") SPAN_BIND(cuDeviceGet, "cuDeviceGet") SPAN_BIND(cuDeviceGetAttribute, "cuDeviceGetAttribute")
  SPAN_BIND(cuGetErrorName, "cuGetErrorName") SPAN_BIND(cuGetErrorString, "cuGetErrorString") SPAN_BIND(cuCtxRetain, "cuDevicePrimaryCtxRetain")
  SPAN_BIND(cuCtxSetCurrent, "cuCtxSetCurrent") SPAN_BIND(cuCtxSynchronize, "cuCtxSynchronize") SPAN_BIND(cuMemAlloc, "cuMemAlloc_v2")
  SPAN_BIND(cuMemFree, "cuMemFree_v2") SPAN_BIND(cuMemAllocHost, "cuMemAllocHost_v2") SPAN_BIND(cuMemFreeHost, "cuMemFreeHost")
  SPAN_BIND(cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2") SPAN_BIND(cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2")
  SPAN_BIND(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2") SPAN_BIND(cuMemsetD32Async, "cuMemsetD32Async") SPAN_BIND(cuStreamCreate, "cuStreamCreate")
  SPAN_BIND(cuStreamSynchronize, "cuStreamSynchronize") SPAN_BIND(cuEventCreate, "cuEventCreate") SPAN_BIND(cuEventDestroy, "cuEventDestroy_v2")
  SPAN_BIND(cuEventRecord, "cuEventRecord") SPAN_BIND(cuEventQuery, "cuEventQuery") SPAN_BIND(cuModuleLoadData, "cuModuleLoadData")
  SPAN_BIND(cuModuleGetFunction, "cuModuleGetFunction") SPAN_BIND(cuLaunchKernel, "cuLaunchKernel")
  return "";
}

/** Size classes: powers of two up to 1 MiB (at least 256 bytes), then multiples of 1 MiB. */
size_t sizeClass(size_t bytes) {
  if (bytes <= 256) return 256;
  if (bytes >= (1u << 20)) return (bytes + (1u << 20) - 1) & ~static_cast<size_t>((1u << 20) - 1);
  size_t c = 512;
  while (c < bytes) c <<= 1;
  return c;
}

}  // namespace

/** The open context, for the loader's probe to leave current (loader.cc's weak reference). */
SPAN_CUcontext openContext() {
  State& s = state();
  return s.open ? s.ctx : nullptr;
}

std::string deviceOpen(void* cu, void* nvrtc, void* lt, int ordinal) {
  State& s = state();
  if (s.open) {  // again (a probe in between may have left another context current): make ours current
    if (s.ordinal != ordinal) return "the cuda context is already open on device " + std::to_string(s.ordinal);
    return cuError("cuCtxSetCurrent", s.cuCtxSetCurrent(s.ctx));
  }
  std::string missing = bindDriver(cu, s);
  if (!missing.empty()) return "libcuda lacks " + missing;
  if ((missing = bindNvrtc(nvrtc, s)) != "") return "libnvrtc lacks " + missing;
  if ((missing = bindLt(lt, s)) != "") return "libcublasLt lacks " + missing;
  std::string e;
  if ((e = cuError("cuInit", s.cuInit(0))) != "") return e;
  if ((e = cuError("cuDeviceGet", s.cuDeviceGet(&s.dev, ordinal))) != "") return e;
  int major = 0, minor = 0;
  s.cuDeviceGetAttribute(&major, SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, s.dev);
  s.cuDeviceGetAttribute(&minor, SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, s.dev);
  s.arch = major * 10 + minor;
  if ((e = cuError("cuDevicePrimaryCtxRetain", s.cuCtxRetain(&s.ctx, s.dev))) != "") return e;
  if ((e = cuError("cuCtxSetCurrent", s.cuCtxSetCurrent(s.ctx))) != "") return e;
  if ((e = cuError("cuStreamCreate", s.cuStreamCreate(&s.stream, SPAN_CU_STREAM_NON_BLOCKING))) != "") return e;
  if ((e = ltOpen(s)) != "") return e;
  s.ordinal = ordinal;
  s.open = true;
  return "";
}

bool deviceIsOpen() { return state().open; }
int deviceArch() { return state().arch; }

std::string deviceAlloc(size_t bytes, uint64_t* ptr) {
  State& s = state();
  size_t c = sizeClass(bytes);
  auto& list = s.freeLists[c];
  if (!list.empty()) {
    // While a graph step records, the lowest free address (graph.cc graphPick), not the last
    // freed, so that a repeated step repeats its addresses and its graph can be replayed.
    auto it = graphRecording() ? graphPick(list) : list.end() - 1;
    *ptr = *it;
    list.erase(it);
    s.cachedBytes -= c;
  } else {
    SPAN_CUdeviceptr p = 0;
    SPAN_CUresult r = s.cuMemAlloc(&p, c);
    if (r == SPAN_CUDA_ERROR_OUT_OF_MEMORY && s.cachedBytes > 0) {
      deviceEmptyCache();
      r = s.cuMemAlloc(&p, c);
    }
    if (r != SPAN_CUDA_SUCCESS) return cuError("cuMemAlloc", r) + " (" + std::to_string(c) + " bytes)";
    s.deviceBytes += c;
    *ptr = p;
  }
  s.sizes[*ptr] = c;
  s.liveBytes += c;
  if (s.liveBytes > s.peakBytes) s.peakBytes = s.liveBytes;
  return "";
}

std::string deviceFree(uint64_t ptr) {
  State& s = state();
  auto it = s.sizes.find(ptr);
  if (it == s.sizes.end()) return "span cuda allocator: free of an unknown device pointer";
  s.freeLists[it->second].push_back(ptr);
  s.liveBytes -= it->second;
  s.cachedBytes += it->second;
  s.sizes.erase(it);
  return "";
}

std::string deviceEmptyCache() {
  if (std::string e = graphBreak("emptyCache"); !e.empty()) return e;
  State& s = state();
  std::string e = cuError("cuStreamSynchronize", s.cuStreamSynchronize(s.stream));
  for (auto& [size, list] : s.freeLists) {
    for (uint64_t p : list) {
      if (e.empty()) e = cuError("cuMemFree", s.cuMemFree(p));
      s.deviceBytes -= size;
    }
    s.cachedBytes -= size * list.size();
    list.clear();
  }
  return e;
}

AllocStats deviceStats() {
  State& s = state();
  AllocStats a;
  a.liveBytes = s.liveBytes;
  a.peakBytes = s.peakBytes;
  a.cachedBytes = s.cachedBytes;
  a.liveBlocks = s.sizes.size();
  a.deviceBytes = s.deviceBytes;
  return a;
}

void deviceResetPeak() {
  State& s = state();
  s.peakBytes = s.liveBytes;
}

std::string deviceUpload(uint64_t dst, const void* src, size_t bytes) {
  if (bytes == 0) return "";
  if (graphRecording()) return graphRecordUpload(dst, src, bytes);
  State& s = state();
  // A pageable source: the driver stages it before returning, so the caller may reuse it at once.
  return cuError("cuMemcpyHtoDAsync", s.cuMemcpyHtoDAsync(dst, src, bytes, s.stream));
}

std::string deviceDownloadSync(void* dst, uint64_t src, size_t bytes) {
  if (std::string e = graphBreak("a synchronous read of device memory"); !e.empty()) return e;
  State& s = state();
  if (bytes > 0) {
    std::string e = cuError("cuMemcpyDtoHAsync", s.cuMemcpyDtoHAsync(dst, src, bytes, s.stream));
    if (!e.empty()) return e;
  }
  return cuError("cuStreamSynchronize", s.cuStreamSynchronize(s.stream));
}

std::string deviceCopy(uint64_t dst, uint64_t src, size_t bytes) {
  if (bytes == 0) return "";
  if (graphRecording()) return graphRecordCopy(dst, src, bytes);
  State& s = state();
  return cuError("cuMemcpyDtoDAsync", s.cuMemcpyDtoDAsync(dst, src, bytes, s.stream));
}

std::string deviceMemsetD32(uint64_t dst, uint32_t value, size_t count) {
  if (count == 0) return "";
  if (graphRecording()) return graphRecordMemsetD32(dst, value, count);
  State& s = state();
  return cuError("cuMemsetD32Async", s.cuMemsetD32Async(dst, value, count, s.stream));
}

std::string deviceSync() {
  if (std::string e = graphBreak("a stream synchronisation"); !e.empty()) return e;
  State& s = state();
  return cuError("cuStreamSynchronize", s.cuStreamSynchronize(s.stream));
}

std::string deviceReadStart(uint64_t src, size_t bytes, int* id) {
  if (std::string e = graphBreak("a read of device memory"); !e.empty()) return e;
  State& s = state();
  PendingRead r;
  r.bytes = bytes;
  std::string e = cuError("cuMemAllocHost", s.cuMemAllocHost(&r.host, bytes > 0 ? bytes : 1));
  if (e.empty() && bytes > 0) e = cuError("cuMemcpyDtoHAsync", s.cuMemcpyDtoHAsync(r.host, src, bytes, s.stream));
  if (e.empty()) e = cuError("cuEventCreate", s.cuEventCreate(&r.event, SPAN_CU_EVENT_DISABLE_TIMING));
  if (e.empty()) e = cuError("cuEventRecord", s.cuEventRecord(r.event, s.stream));
  if (!e.empty()) {
    if (r.event) s.cuEventDestroy(r.event);
    if (r.host) s.cuMemFreeHost(r.host);
    return e;
  }
  *id = ++s.lastRead;
  s.reads[*id] = r;
  return "";
}

std::string deviceReadPoll(int id, void* dst, int* done) {
  State& s = state();
  auto it = s.reads.find(id);
  if (it == s.reads.end()) return "span cuda: unknown read " + std::to_string(id);
  SPAN_CUresult q = s.cuEventQuery(it->second.event);
  *done = 0;
  if (q == SPAN_CUDA_ERROR_NOT_READY) return "";
  std::string e = cuError("cuEventQuery", q);
  if (e.empty()) {
    std::memcpy(dst, it->second.host, it->second.bytes);
    *done = 1;
  }
  s.cuEventDestroy(it->second.event);
  s.cuMemFreeHost(it->second.host);
  s.reads.erase(it);
  return e;
}

}  // namespace span_cuda
