// The libcuda stand-in (libcuda.so.1 in the stand-ins' folder): the driver entry points of
// native/cuda/src/abi.h over host memory and the CUDA-C emulator. A fake device ("Span Stand-in
// GPU", compute capability 8.0); device memory is host memory with an allocation table
// (memory.cc); stream work runs at once, in order, or with SPAN_STANDIN_DEFER=1 only at the next
// synchronisation (so a host read before it sees stale data, and the first cuEventQuery or
// cuStreamQuery after new work says CUDA_ERROR_NOT_READY); modules are what the NVRTC stand-in
// built; cuLaunchKernel runs the kernel through the emulator (emu/scheduler.cc). A launch or
// copy that touches memory outside a live allocation fails with a message on stderr and from
// spanStandinLastError(); a failed kernel (deadlock, trap) is a sticky CUDA_ERROR_LAUNCH_FAILED,
// as a GPU fault is. Stream capture records stream work into a graph instead of running it (a
// launch keeps its parameter values, a copy its addresses) and cuGraphLaunch replays it; what the
// driver refuses during capture (allocation, synchronous copies, synchronising or querying a
// capturing stream, pageable host memory in a captured copy) fails with its error and invalidates
// the capture (docs/cuda-standins.md). Test-only: never shipped, never on a library path.
//   SPAN_STANDIN_DEVICES  how many devices (default 1)     SPAN_STANDIN_MEM_MB  memory of each (16384)
//   SPAN_EMU_SCHEDULE     inorder|reverse|random[:seed]|warp   SPAN_STANDIN_QUIET=1  no stderr lines
//   SPAN_STANDIN_GUARD=0  allocations from the heap, unguarded (by default each ends at an inaccessible page
//                         and freed ones stay inaccessible: a kernel touching them fails with CUDA_ERROR_ILLEGAL_ADDRESS)
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "../emu/scheduler.h"
#include "memory.h"

#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

enum : int {
  OK = 0,
  INVALID_VALUE = 1,
  OUT_OF_MEMORY = 2,
  NOT_INITIALIZED = 3,
  NO_DEVICE = 100,
  INVALID_DEVICE = 101,
  INVALID_IMAGE = 200,
  INVALID_CONTEXT = 201,
  NO_BINARY_FOR_GPU = 209,
  INVALID_PTX = 218,
  INVALID_HANDLE = 400,
  ILLEGAL_STATE = 401,
  NOT_FOUND = 500,
  NOT_READY = 600,
  ILLEGAL_ADDRESS = 700,
  ASSERT = 710,
  LAUNCH_FAILED = 719,
  NOT_SUPPORTED = 801,
  CAPTURE_UNSUPPORTED = 900,
  CAPTURE_INVALIDATED = 901,
  CAPTURED_EVENT = 907,
  CAPTURE_WRONG_THREAD = 908,
  UNKNOWN = 999,
};

struct ErrorText {
  int code;
  const char *name, *text;
};
const ErrorText kErrors[] = {
    {OK, "CUDA_SUCCESS", "no error"},
    {INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"},
    {INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"},
    {NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {ASSERT, "CUDA_ERROR_ASSERT", "device-side assert triggered"},
    {LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"},
    {CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"},
    {CAPTURED_EVENT, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream"},
    {CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread"},
    {UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

struct Ctx {
  int device;
};
struct Module;
struct Function {
  const SpanEmuKernel* kernel;
  Module* module;
  int maxDynamicSmem = 48 * 1024;
};
struct Module {
  void* handle = nullptr;
  int fd = -1;
  char *shared = nullptr, *sharedEnd = nullptr;  // its __shared__ variables
  std::vector<Function*> functions;
};
struct Event {
  unsigned flags;
  bool recorded = false;
  bool captured = false;  // last recorded into a capture: query and synchronize refuse it (CUDA_ERROR_CAPTURED_EVENT)
  double ms = 0;
};

/** Stream work waiting for a synchronisation (SPAN_STANDIN_DEFER=1), in the order it was issued: one queue serves every stream. */
std::deque<std::function<int()>> pending;

std::recursive_mutex mu;
bool initialised = false;
int sticky = OK;  // a kernel fault: every later call fails with it
std::string lastError;
unsigned long long launches = 0;      // cuLaunchKernel calls that ran (or queued) a kernel, not captured ones
unsigned long long submissions = 0;   // work put on a stream outside capture: launches, copies, memsets, event records, host work (cuBLASLt)
unsigned long long graphLaunches = 0;  // cuGraphLaunch calls
std::vector<Ctx*> primary;
thread_local Ctx* current = nullptr;
std::set<void*> streams, events, modules;

int deviceCount() {
  const char* e = getenv("SPAN_STANDIN_DEVICES");
  int n = e ? atoi(e) : 1;
  return n < 0 ? 0 : n > 16 ? 16 : n;
}

/** Records why a call failed (spanStandinLastError, and one line on stderr) and returns its code. */
int fail(int code, const char* api, const std::string& why) {
  lastError = std::string(api) + ": " + why;
  if (!getenv("SPAN_STANDIN_QUIET") || strcmp(getenv("SPAN_STANDIN_QUIET"), "1") != 0) fprintf(stderr, "span cuda stand-in: %s\n", lastError.c_str());
  return code;
}

/** The checks every call that works in a context makes first. */
int ready() {
  if (!initialised) return NOT_INITIALIZED;
  if (sticky) return sticky;
  return current ? OK : INVALID_CONTEXT;
}

bool validStream(void* s) { return s == nullptr || s == reinterpret_cast<void*>(1) || s == reinterpret_cast<void*>(2) || streams.count(s); }

bool deferred() {
  const char* d = getenv("SPAN_STANDIN_DEFER");
  return d && strcmp(d, "1") == 0;
}

/** Runs stream work now, or queues it when deferred. */
int enqueue(std::function<int()> work) {
  if (!deferred()) return work();
  pending.push_back(std::move(work));
  return 0;
}

/** Runs every queued piece of work (a synchronisation point); the first failure is returned (and is sticky for kernels). */
int flush() {
  while (!pending.empty()) {
    auto work = std::move(pending.front());
    pending.pop_front();
    int r = work();
    if (r) {
      pending.clear();
      return r;
    }
  }
  return sticky;
}

// ---- stream capture: work recorded into a graph instead of run (cuStreamBeginCapture … cuGraphLaunch) ----

using Work = std::function<int()>;
struct Capture {
  int mode;  // CU_STREAM_CAPTURE_MODE_GLOBAL 0, THREAD_LOCAL 1, RELAXED 2
  std::thread::id thread;
  bool invalid = false;
  std::vector<Work> nodes;
};
/** A graph or an executable graph: its nodes in stream order (one stream, so a chain), shared with launches still queued. */
struct Graph {
  std::shared_ptr<const std::vector<Work>> nodes;
};
std::map<void*, Capture> captures;  // by stream
std::set<void*> graphs, execs;

/**
 * Stream work: recorded when `stream` is capturing (not run; launches keep the parameter values
 * they had at capture, copies and memsets their addresses and values, as CUDA's graph nodes do),
 * else run or queued as before. Work on an invalidated capture fails as the driver's does.
 */
int enqueueOn(void* stream, Work work) {
  auto c = captures.find(stream);
  if (c == captures.end()) return submissions++, enqueue(std::move(work));
  if (c->second.invalid) return fail(CAPTURE_INVALIDATED, "capture", "work on a stream whose capture was invalidated");
  c->second.nodes.push_back(std::move(work));
  return OK;
}

/**
 * A call the driver calls potentially unsafe during capture (an allocation or free, a synchronous
 * copy or memset): refused while a capture not begun RELAXED is active (GLOBAL: from any thread;
 * THREAD_LOCAL: from the capturing one), and those captures are invalidated, as the driver does.
 */
int unsafeUnderCapture(const char* api) {
  std::string modes;
  for (auto& [stream, c] : captures) {
    if (c.mode == 2 || (c.mode == 1 && c.thread != std::this_thread::get_id())) continue;
    c.invalid = true;
    modes = c.mode == 0 ? "GLOBAL" : "THREAD_LOCAL";
  }
  if (modes.empty()) return OK;
  return fail(CAPTURE_UNSUPPORTED, api, "not permitted while a stream is capturing (mode " + modes + "); the capture is invalidated");
}

/** A synchronisation or query of `stream` (of every stream: anyStream): refused, and the capture invalidated, while it captures. */
int syncUnderCapture(const char* api, void* stream, bool anyStream) {
  bool hit = false;
  for (auto& [s, c] : captures)
    if (anyStream || s == stream) hit = c.invalid = true;
  return hit ? fail(CAPTURE_UNSUPPORTED, api, "a capturing stream cannot be synchronised or queried; the capture is invalidated") : OK;
}

/** Whether a copy's host side is pageable (not cuMemAllocHost memory): a captured copy may not use it (the driver stages pageable memory when the call is made, which a replay cannot repeat). */
bool pageable(const void* host) { return !span_standin::checkPointer(reinterpret_cast<uintptr_t>(host)).empty(); }

double nowMs() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

int deviceAttribute(int attr) {
  switch (attr) {
    case 1: case 2: case 3: return 1024;          // threads per block, block dim x y
    case 4: return 64;                            // block dim z
    case 5: return 2147483647;                    // grid dim x
    case 6: case 7: return 65535;                 // grid dim y z
    case 8: return 49152;                         // shared memory per block
    case 9: return 65536;                         // constant memory
    case 10: return 32;                           // warp size
    case 12: return 65536;                        // registers per block
    case 13: return 1410000;                      // clock (kHz)
    case 16: return 108;                          // multiprocessors
    case 31: case 41: return 1;                   // concurrent kernels, unified addressing
    case 36: return 1215000;                      // memory clock (kHz)
    case 37: return 5120;                         // bus width
    case 38: return 40 * 1024 * 1024;             // L2
    case 39: return 2048;                         // threads per multiprocessor
    case 40: return 2;                            // async engines
    case 75: return 8;                            // compute capability
    case 76: return 0;
    case 81: return 167936;                       // shared memory per multiprocessor
    case 97: return 166912;                       // shared memory per block, opt-in
    default: return 0;
  }
}

/** The module bytes of an image from the NVRTC stand-in (its CUBIN or PTX form), or why it is not one. */
std::string moduleBytes(const char* image, std::string& out) {
  if (memcmp(image, SPAN_EMU_IMAGE_MAGIC, 8) == 0) {
    uint64_t len;
    memcpy(&len, image + 8, 8);
    out.assign(image + 16, len);
    return "";
  }
  size_t pre = strlen(SPAN_EMU_PTX_PREFIX);
  if (strncmp(image, SPAN_EMU_PTX_PREFIX, pre) == 0) {
    for (const char* h = image + pre; h[0] && h[1]; h += 2) out += static_cast<char>(std::stoi(std::string(h, 2), nullptr, 16));
    return "";
  }
  if (memcmp(image, "\x7f" "ELF", 4) == 0) return "a real CUBIN: the stand-in runs only modules its NVRTC stand-in built";
  return "not a module of the NVRTC stand-in (real PTX cannot run on the emulator)";
}

int loadModule(Module* m, const std::string& bytes) {
  m->fd = memfd_create("span-emu-module", MFD_CLOEXEC);
  if (m->fd < 0 || write(m->fd, bytes.data(), bytes.size()) != static_cast<ssize_t>(bytes.size())) return fail(INVALID_IMAGE, "cuModuleLoadData", "memfd");
  std::string path = "/proc/self/fd/" + std::to_string(m->fd);  // kept open while loaded: a path is never reused by a live module
  m->handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle) return fail(INVALID_IMAGE, "cuModuleLoadData", dlerror());
  auto init = reinterpret_cast<SpanEmuModuleInit>(dlsym(m->handle, SPAN_EMU_MODULE_INIT));
  auto* table = static_cast<const SpanEmuKernel*>(dlsym(m->handle, SPAN_EMU_MODULE_KERNELS));
  if (!init || !table || init(span_emu::runtime()) != 0) return fail(INVALID_IMAGE, "cuModuleLoadData", "the module's emulator interface differs (rebuild the stand-ins)");
  auto range = reinterpret_cast<void (*)(char**, char**)>(dlsym(m->handle, SPAN_EMU_MODULE_SHARED));
  if (range) range(&m->shared, &m->sharedEnd);
  for (const SpanEmuKernel* k = table; k->name; k++) m->functions.push_back(new Function{k, m});
  return OK;
}

void unloadModule(Module* m) {
  for (Function* f : m->functions) delete f;
  if (m->handle) dlclose(m->handle);
  if (m->fd >= 0) close(m->fd);
  delete m;
}

/** "" when every pointer argument of the launch points into a live allocation. */
std::string checkParams(const SpanEmuKernel* k, void** params) {
  for (unsigned i = 0; i < k->paramCount; i++) {
    if (!k->params[i].isPointer) continue;
    uintptr_t p;
    memcpy(&p, params[i], sizeof p);
    std::string why = span_standin::checkPointer(p);
    if (!why.empty()) return std::string("kernel ") + k->name + ", parameter " + std::to_string(i) + ": " + why;
  }
  return "";
}

int launchChecks(Function* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void* stream, void** params) {
  if (!f) return fail(INVALID_HANDLE, "cuLaunchKernel", "no function");
  if (!validStream(stream)) return fail(INVALID_HANDLE, "cuLaunchKernel", "not a live stream");
  if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 || bx > 1024 || by > 1024 || bz > 64 || bx * by * bz > 1024)
    return fail(INVALID_VALUE, "cuLaunchKernel", std::string(f->kernel->name) + ": grid or block dimensions out of range");
  if (smem > static_cast<unsigned>(f->maxDynamicSmem))
    return fail(INVALID_VALUE, "cuLaunchKernel",
                std::string(f->kernel->name) + ": " + std::to_string(smem) + " bytes of dynamic shared memory, above " + std::to_string(f->maxDynamicSmem) +
                    " (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES raises it)");
  if (f->kernel->paramCount && !params) return fail(INVALID_VALUE, "cuLaunchKernel", std::string(f->kernel->name) + ": kernelParams is NULL");
  std::string bad = checkParams(f->kernel, params);
  if (!bad.empty()) return sticky = fail(ILLEGAL_ADDRESS, "cuLaunchKernel", bad);
  return OK;
}

int copy(const char* api, void* dst, const void* src, size_t n, bool dstDevice, bool srcDevice, void* stream) {
  int r = ready();
  if (r) return r;
  if (!validStream(stream)) return fail(INVALID_HANDLE, api, "not a live stream");
  std::string why = dstDevice ? span_standin::checkRange(reinterpret_cast<uintptr_t>(dst), n) : "";
  if (why.empty() && srcDevice) why = span_standin::checkRange(reinterpret_cast<uintptr_t>(src), n);
  if (!why.empty()) return fail(INVALID_VALUE, api, why);
  if (!n) return OK;
  if (!stream && strstr(api, "Async") == nullptr) {  // a synchronous copy: everything before it first
    if ((r = unsafeUnderCapture(api)) != OK || (r = flush()) != OK) return r;
    memmove(dst, src, n);
    return OK;
  }
  if (captures.count(stream) && ((!srcDevice && pageable(src)) || (!dstDevice && pageable(dst)))) {
    captures[stream].invalid = true;
    return fail(CAPTURE_UNSUPPORTED, api, "pageable host memory in a captured copy (use cuMemAllocHost memory); the capture is invalidated");
  }
  if (!srcDevice && pageable(src)) {  // pageable host memory is staged at once
    auto staged = std::make_shared<std::string>(static_cast<const char*>(src), n);
    return enqueueOn(stream, [dst, staged]() -> int { return memmove(dst, staged->data(), staged->size()), OK; });
  }
  return enqueueOn(stream, [dst, src, n]() -> int { return memmove(dst, src, n), OK; });
}

int memsetN(const char* api, uintptr_t dst, unsigned value, size_t n, size_t width, void* stream) {
  int r = ready();
  if (r) return r;
  if (!validStream(stream)) return fail(INVALID_HANDLE, api, "not a live stream");
  if (dst % width) return fail(INVALID_VALUE, api, "the address is not aligned to the element size");
  std::string why = span_standin::checkRange(dst, n * width);
  if (!why.empty()) return fail(INVALID_VALUE, api, why);
  if (!stream && strstr(api, "Async") == nullptr && (r = unsafeUnderCapture(api)) != OK) return r;
  return enqueueOn(stream, [dst, value, n, width]() -> int {
    if (width == 1) memset(reinterpret_cast<void*>(dst), static_cast<int>(value), n);
    else
      for (size_t i = 0; i < n; i++) reinterpret_cast<uint32_t*>(dst)[i] = value;
    return OK;
  });
}

/** A launch, run now or later: its parameter values are copied here, as cuLaunchKernel copies them. */
int runLaunch(span_emu::Launch L, void** params, void* stream) {
  auto bytes = std::make_shared<std::vector<std::vector<char>>>();
  for (unsigned i = 0; i < L.kernel->paramCount; i++) bytes->emplace_back(static_cast<char*>(params[i]), static_cast<char*>(params[i]) + L.kernel->params[i].size);
  return enqueueOn(stream, [L, bytes]() mutable -> int {
    std::vector<void*> ptrs;
    for (auto& b : *bytes) ptrs.push_back(b.data());
    L.params = ptrs.data();
    std::string err = span_emu::run(L);
    if (err.empty()) return OK;
    int code = err.rfind("illegal address", 0) == 0 ? ILLEGAL_ADDRESS : err.find("assert") != std::string::npos ? ASSERT : LAUNCH_FAILED;
    return sticky = fail(code, "cuLaunchKernel", err);
  });
}

}  // namespace

#define LOCK std::lock_guard<std::recursive_mutex> lock(mu)

// ---- errors, version, devices ----

EXPORT int cuGetErrorName(int e, const char** s) {
  for (const auto& t : kErrors)
    if (t.code == e) return s ? (*s = t.name, OK) : INVALID_VALUE;
  if (s) *s = nullptr;
  return INVALID_VALUE;
}
EXPORT int cuGetErrorString(int e, const char** s) {
  for (const auto& t : kErrors)
    if (t.code == e) return s ? (*s = t.text, OK) : INVALID_VALUE;
  if (s) *s = nullptr;
  return INVALID_VALUE;
}
EXPORT int cuInit(unsigned flags) {
  LOCK;
  if (flags) return INVALID_VALUE;
  initialised = true;
  if (span_standin::guarded()) span_emu::catchFaults(span_standin::describeFault);
  while (primary.size() < static_cast<size_t>(deviceCount())) primary.push_back(new Ctx{static_cast<int>(primary.size())});
  return deviceCount() ? OK : NO_DEVICE;
}
EXPORT int cuDriverGetVersion(int* v) { return v ? (*v = 13000, OK) : INVALID_VALUE; }
EXPORT int cuDeviceGetCount(int* n) {
  if (!n) return INVALID_VALUE;
  if (!initialised) return NOT_INITIALIZED;
  *n = deviceCount();
  return OK;
}
EXPORT int cuDeviceGet(int* d, int ordinal) {
  if (!initialised) return NOT_INITIALIZED;
  if (!d) return INVALID_VALUE;
  if (ordinal < 0 || ordinal >= deviceCount()) return INVALID_DEVICE;
  *d = ordinal;
  return OK;
}
EXPORT int cuDeviceGetName(char* name, int len, int dev) {
  if (!initialised) return NOT_INITIALIZED;
  if (dev < 0 || dev >= deviceCount()) return INVALID_DEVICE;
  if (!name || len <= 0) return INVALID_VALUE;
  snprintf(name, static_cast<size_t>(len), "Span Stand-in GPU (CUDA-C emulator, sm_80)");
  return OK;
}
EXPORT int cuDeviceTotalMem_v2(size_t* bytes, int dev) {
  if (!initialised) return NOT_INITIALIZED;
  if (dev < 0 || dev >= deviceCount()) return INVALID_DEVICE;
  return bytes ? (*bytes = span_standin::totalBytes(), OK) : INVALID_VALUE;
}
EXPORT int cuDeviceTotalMem(size_t* bytes, int dev) { return cuDeviceTotalMem_v2(bytes, dev); }
EXPORT int cuDeviceGetAttribute(int* v, int attr, int dev) {
  if (!initialised) return NOT_INITIALIZED;
  if (dev < 0 || dev >= deviceCount()) return INVALID_DEVICE;
  return v ? (*v = deviceAttribute(attr), OK) : INVALID_VALUE;
}

// ---- contexts ----

EXPORT int cuDevicePrimaryCtxRetain(void** ctx, int dev) {
  LOCK;
  if (!initialised) return NOT_INITIALIZED;
  if (dev < 0 || dev >= deviceCount()) return INVALID_DEVICE;
  return ctx ? (*ctx = primary[static_cast<size_t>(dev)], OK) : INVALID_VALUE;
}
EXPORT int cuDevicePrimaryCtxRelease_v2(int dev) { return !initialised ? NOT_INITIALIZED : dev < 0 || dev >= deviceCount() ? INVALID_DEVICE : OK; }
EXPORT int cuDevicePrimaryCtxRelease(int dev) { return cuDevicePrimaryCtxRelease_v2(dev); }
EXPORT int cuCtxSetCurrent(void* ctx) {
  if (!initialised) return NOT_INITIALIZED;
  current = static_cast<Ctx*>(ctx);
  return OK;
}
EXPORT int cuCtxGetCurrent(void** ctx) {
  if (!initialised) return NOT_INITIALIZED;
  return ctx ? (*ctx = current, OK) : INVALID_VALUE;
}
EXPORT int cuCtxPushCurrent_v2(void* ctx) { return cuCtxSetCurrent(ctx); }
EXPORT int cuCtxPopCurrent_v2(void** ctx) {
  if (ctx) *ctx = current;
  current = nullptr;
  return initialised ? OK : NOT_INITIALIZED;
}
EXPORT int cuCtxGetDevice(int* dev) {
  int r = ready();
  return r ? r : dev ? (*dev = current->device, OK) : INVALID_VALUE;
}
EXPORT int cuCtxSynchronize() {
  LOCK;
  int r = ready();
  if (r || (r = syncUnderCapture("cuCtxSynchronize", nullptr, true)) != OK) return r;
  return flush();
}

// ---- memory ----

EXPORT int cuMemGetInfo_v2(size_t* freeBytes, size_t* total) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!freeBytes || !total) return INVALID_VALUE;
  *total = span_standin::totalBytes();
  *freeBytes = *total - span_standin::liveBytes();
  return OK;
}
EXPORT int cuMemGetInfo(size_t* f, size_t* t) { return cuMemGetInfo_v2(f, t); }
EXPORT int cuMemAlloc_v2(unsigned long long* p, size_t bytes) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!p || bytes == 0) return INVALID_VALUE;
  if ((r = unsafeUnderCapture("cuMemAlloc")) != OK) return r;
  *p = span_standin::allocate(bytes, false);
  return *p ? OK : fail(OUT_OF_MEMORY, "cuMemAlloc", std::to_string(bytes) + " bytes: the stand-in device's memory is used up");
}
EXPORT int cuMemFree_v2(unsigned long long p) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (p == 0) return OK;
  if ((r = unsafeUnderCapture("cuMemFree")) != OK) return r;
  if ((r = flush()) != OK) return r;  // cuMemFree waits for the work that may use the memory
  return span_standin::release(p, false) ? OK : fail(INVALID_VALUE, "cuMemFree", span_standin::checkPointer(p).empty() ? "not the start of an allocation" : span_standin::checkPointer(p));
}
EXPORT int cuMemAllocAsync(unsigned long long* p, size_t bytes, void* stream) {
  LOCK;
  if (captures.count(stream)) return fail(NOT_SUPPORTED, "cuMemAllocAsync", "the stand-in does not model graph memory nodes");
  return validStream(stream) ? cuMemAlloc_v2(p, bytes) : INVALID_HANDLE;
}
EXPORT int cuMemFreeAsync(unsigned long long p, void* stream) {
  LOCK;
  int r = ready();
  if (r || !validStream(stream)) return r ? r : INVALID_HANDLE;
  if (!span_standin::checkRange(p, 1).empty()) return fail(INVALID_VALUE, "cuMemFreeAsync", span_standin::checkPointer(p));
  if (captures.count(stream)) return fail(NOT_SUPPORTED, "cuMemFreeAsync", "the stand-in does not model graph memory nodes");
  return enqueueOn(stream, [p]() -> int { return span_standin::release(p, false) ? OK : INVALID_VALUE; });
}
EXPORT int cuMemAllocHost_v2(void** p, size_t bytes) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!p || bytes == 0) return INVALID_VALUE;
  if ((r = unsafeUnderCapture("cuMemAllocHost")) != OK) return r;
  *p = reinterpret_cast<void*>(span_standin::allocate(bytes, true));
  return *p ? OK : OUT_OF_MEMORY;
}
EXPORT int cuMemFreeHost(void* p) {
  LOCK;
  int r = ready();
  if (r || (r = unsafeUnderCapture("cuMemFreeHost")) != OK) return r;
  return span_standin::release(reinterpret_cast<uintptr_t>(p), true) ? OK : fail(INVALID_VALUE, "cuMemFreeHost", "not a cuMemAllocHost allocation");
}

#define DEV(p) reinterpret_cast<void*>(static_cast<uintptr_t>(p))
EXPORT int cuMemcpyHtoD_v2(unsigned long long d, const void* h, size_t n) { LOCK; return copy("cuMemcpyHtoD", DEV(d), h, n, true, false, nullptr); }
EXPORT int cuMemcpyDtoH_v2(void* h, unsigned long long d, size_t n) { LOCK; return copy("cuMemcpyDtoH", h, DEV(d), n, false, true, nullptr); }
EXPORT int cuMemcpyDtoD_v2(unsigned long long d, unsigned long long s, size_t n) { LOCK; return copy("cuMemcpyDtoD", DEV(d), DEV(s), n, true, true, nullptr); }
EXPORT int cuMemcpyHtoDAsync_v2(unsigned long long d, const void* h, size_t n, void* st) { LOCK; return copy("cuMemcpyHtoDAsync", DEV(d), h, n, true, false, st); }
EXPORT int cuMemcpyDtoHAsync_v2(void* h, unsigned long long d, size_t n, void* st) { LOCK; return copy("cuMemcpyDtoHAsync", h, DEV(d), n, false, true, st); }
EXPORT int cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void* st) { LOCK; return copy("cuMemcpyDtoDAsync", DEV(d), DEV(s), n, true, true, st); }
EXPORT int cuMemsetD8_v2(unsigned long long d, unsigned char v, size_t n) { LOCK; return memsetN("cuMemsetD8", d, v, n, 1, nullptr); }
EXPORT int cuMemsetD32_v2(unsigned long long d, unsigned v, size_t n) { LOCK; return memsetN("cuMemsetD32", d, v, n, 4, nullptr); }
EXPORT int cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void* st) { LOCK; return memsetN("cuMemsetD8Async", d, v, n, 1, st); }
EXPORT int cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void* st) { LOCK; return memsetN("cuMemsetD32Async", d, v, n, 4, st); }

// ---- streams and events: work runs at once, so every stream is always complete ----

EXPORT int cuStreamCreate(void** s, unsigned flags) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!s || flags > 1) return INVALID_VALUE;
  *s = new char(1);
  streams.insert(*s);
  return OK;
}
EXPORT int cuStreamDestroy_v2(void* s) {
  LOCK;
  if (!streams.erase(s)) return INVALID_HANDLE;
  captures.erase(s);
  delete static_cast<char*>(s);
  return OK;
}
EXPORT int cuStreamSynchronize(void* s) {
  LOCK;
  int r = ready();
  if (r || !validStream(s)) return r ? r : INVALID_HANDLE;
  return (r = syncUnderCapture("cuStreamSynchronize", s, false)) != OK ? r : flush();
}
/** Deferred: NOT_READY once while work is queued (it then runs), so a polling loop is exercised. */
EXPORT int cuStreamQuery(void* s) {
  LOCK;
  int r = ready();
  if (r || !validStream(s)) return r ? r : INVALID_HANDLE;
  if ((r = syncUnderCapture("cuStreamQuery", s, false)) != OK) return r;
  if (pending.empty()) return OK;
  return (r = flush()) ? r : NOT_READY;
}
EXPORT int cuStreamWaitEvent(void* s, void* e, unsigned) {
  LOCK;
  int r = ready();
  return r ? r : validStream(s) && events.count(e) ? OK : INVALID_HANDLE;
}
/** A host function in stream order (the NCCL stand-in's collectives run through it). */
EXPORT int cuLaunchHostFunc(void* s, void (*fn)(void*), void* data) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!validStream(s)) return INVALID_HANDLE;
  if (!fn) return INVALID_VALUE;
  return enqueue([fn, data]() -> int { return fn(data), OK; });
}
EXPORT int cuEventCreate(void** e, unsigned flags) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!e) return INVALID_VALUE;
  *e = new Event{flags};
  events.insert(*e);
  return OK;
}
EXPORT int cuEventDestroy_v2(void* e) {
  LOCK;
  if (!events.erase(e)) return INVALID_HANDLE;
  delete static_cast<Event*>(e);
  return OK;
}
EXPORT int cuEventRecord(void* e, void* s) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!events.count(e) || !validStream(s)) return INVALID_HANDLE;
  auto* ev = static_cast<Event*>(e);
  ev->recorded = false;
  ev->captured = captures.count(s) != 0;
  return enqueueOn(s, [ev]() -> int { return ev->recorded = true, ev->ms = nowMs(), OK; });
}
EXPORT int cuEventQuery(void* e) {
  LOCK;
  int r = ready();
  if (r || !events.count(e)) return r ? r : INVALID_HANDLE;
  if (static_cast<Event*>(e)->captured) return fail(CAPTURED_EVENT, "cuEventQuery", "the event was last recorded in a capture");
  if (pending.empty()) return OK;
  return (r = flush()) ? r : NOT_READY;
}
EXPORT int cuEventSynchronize(void* e) {
  LOCK;
  int r = ready();
  if (r || !events.count(e)) return r ? r : INVALID_HANDLE;
  if (static_cast<Event*>(e)->captured) return fail(CAPTURED_EVENT, "cuEventSynchronize", "the event was last recorded in a capture");
  return flush();
}
EXPORT int cuEventElapsedTime_v2(float* ms, void* a, void* b) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!ms) return INVALID_VALUE;
  if (!events.count(a) || !events.count(b)) return INVALID_HANDLE;
  auto *ea = static_cast<Event*>(a), *eb = static_cast<Event*>(b);
  if (!ea->recorded || !eb->recorded || (ea->flags & 2) || (eb->flags & 2)) return INVALID_HANDLE;
  *ms = static_cast<float>(eb->ms - ea->ms);
  return OK;
}
EXPORT int cuEventElapsedTime(float* ms, void* a, void* b) { return cuEventElapsedTime_v2(ms, a, b); }

// ---- modules and launches ----

EXPORT int cuModuleLoadData(void** mod, const void* image) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!mod || !image) return INVALID_VALUE;
  std::string bytes, why = moduleBytes(static_cast<const char*>(image), bytes);
  if (!why.empty()) return fail(memcmp(image, "\x7f" "ELF", 4) == 0 ? NO_BINARY_FOR_GPU : INVALID_IMAGE, "cuModuleLoadData", why);
  auto* m = new Module();
  if ((r = loadModule(m, bytes)) != OK) return unloadModule(m), r;
  modules.insert(m);
  *mod = m;
  return OK;
}
EXPORT int cuModuleUnload(void* mod) {
  LOCK;
  if (!modules.erase(mod)) return INVALID_HANDLE;
  unloadModule(static_cast<Module*>(mod));
  return OK;
}
EXPORT int cuModuleGetFunction(void** f, void* mod, const char* name) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!f || !name) return INVALID_VALUE;
  if (!modules.count(mod)) return INVALID_HANDLE;
  for (Function* fn : static_cast<Module*>(mod)->functions)
    if (strcmp(fn->kernel->name, name) == 0) return *f = fn, OK;
  return NOT_FOUND;
}
EXPORT int cuFuncSetAttribute(void* f, int attr, int value) {
  LOCK;
  if (!f) return INVALID_HANDLE;
  if (attr != 8) return OK;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES; others are hints
  if (value < 0 || value > deviceAttribute(97)) return INVALID_VALUE;
  static_cast<Function*>(f)->maxDynamicSmem = value;
  return OK;
}
EXPORT int cuFuncGetAttribute(int* v, int attr, void* f) {
  if (!v || !f) return INVALID_VALUE;
  *v = attr == 0 ? 1024 : attr == 8 ? static_cast<Function*>(f)->maxDynamicSmem : 0;
  return OK;
}

EXPORT int cuLaunchKernel(void* fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned smem, void* stream, void** params,
                          void** extra) {
  LOCK;
  int r = ready();
  if (r) return r;
  auto* f = static_cast<Function*>(fn);
  if (extra) return fail(NOT_SUPPORTED, "cuLaunchKernel", "the stand-in takes kernelParams, not extra");
  if ((r = launchChecks(f, gx, gy, gz, bx, by, bz, smem, stream, params)) != OK) return r;
  span_emu::Launch L;
  std::string err;
  if (!span_emu::parseSchedule(getenv("SPAN_EMU_SCHEDULE"), L.schedule, err)) return fail(INVALID_VALUE, "cuLaunchKernel", err);
  L.staticSmem = f->module->shared, L.staticSmemBytes = static_cast<size_t>(f->module->sharedEnd - f->module->shared);
  L.kernel = f->kernel, L.grid = {gx, gy, gz}, L.block = {bx, by, bz}, L.dynSmem = smem;
  if (!captures.count(stream)) launches++;
  return runLaunch(L, params, stream);
}

// ---- stream capture and graphs ----

EXPORT int cuStreamBeginCapture_v2(void* s, int mode) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!validStream(s)) return INVALID_HANDLE;
  if (mode < 0 || mode > 2) return INVALID_VALUE;
  if (s == nullptr || s == reinterpret_cast<void*>(1)) return fail(CAPTURE_UNSUPPORTED, "cuStreamBeginCapture", "the legacy NULL stream cannot be captured");
  if (captures.count(s)) return fail(ILLEGAL_STATE, "cuStreamBeginCapture", "the stream is already capturing");
  captures[s] = Capture{mode, std::this_thread::get_id(), false, {}};
  return OK;
}
EXPORT int cuStreamEndCapture(void* s, void** graph) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!graph) return INVALID_VALUE;
  auto c = captures.find(s);
  if (c == captures.end()) return fail(ILLEGAL_STATE, "cuStreamEndCapture", "the stream is not capturing");
  if (c->second.mode != 2 && c->second.thread != std::this_thread::get_id())
    return fail(CAPTURE_WRONG_THREAD, "cuStreamEndCapture", "a capture not begun RELAXED ends on the thread that began it");
  Capture cap = std::move(c->second);
  captures.erase(c);
  *graph = nullptr;
  if (cap.invalid) return fail(CAPTURE_INVALIDATED, "cuStreamEndCapture", "an operation during the capture was not permitted");
  auto* g = new Graph{std::make_shared<const std::vector<Work>>(std::move(cap.nodes))};
  graphs.insert(g);
  *graph = g;
  return OK;
}
EXPORT int cuStreamIsCapturing(void* s, int* status) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!status) return INVALID_VALUE;
  if (!validStream(s)) return INVALID_HANDLE;
  auto c = captures.find(s);
  *status = c == captures.end() ? 0 : c->second.invalid ? 2 : 1;
  return OK;
}
/** Flags: 0 or CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH (no memory nodes here, so no effect); the others are refused. */
EXPORT int cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!exec || flags > 1) return flags > 1 ? fail(NOT_SUPPORTED, "cuGraphInstantiateWithFlags", "flags other than AUTO_FREE_ON_LAUNCH") : INVALID_VALUE;
  if (!graphs.count(graph)) return INVALID_VALUE;
  auto* e = new Graph{static_cast<Graph*>(graph)->nodes};  // the executable graph is independent of the graph
  execs.insert(e);
  *exec = e;
  return OK;
}
/** The recorded work, in order, as one piece of stream work; the first failure stops it (a kernel fault is sticky as ever). */
EXPORT int cuGraphLaunch(void* exec, void* s) {
  LOCK;
  int r = ready();
  if (r) return r;
  if (!execs.count(exec)) return INVALID_VALUE;
  if (!validStream(s)) return INVALID_HANDLE;
  auto nodes = static_cast<Graph*>(exec)->nodes;
  if (!captures.count(s)) graphLaunches++;
  return enqueueOn(s, [nodes]() -> int {
    for (const Work& w : *nodes)
      if (int e = w()) return e;
    return OK;
  });
}
EXPORT int cuGraphExecDestroy(void* exec) {
  LOCK;
  if (!execs.erase(exec)) return INVALID_VALUE;
  delete static_cast<Graph*>(exec);
  return OK;
}
EXPORT int cuGraphDestroy(void* graph) {
  LOCK;
  if (!graphs.erase(graph)) return INVALID_VALUE;
  delete static_cast<Graph*>(graph);
  return OK;
}

/**
 * Host work in stream order, for the other stand-ins (cuBLASLt's matmul): fn(arg) runs when the
 * stream reaches it, or is recorded into the stream's capture and runs at each replay; release(arg)
 * when the work can no longer run. Returns a CUresult.
 */
EXPORT int spanStandinEnqueueHost(void* s, int (*fn)(void*), void* arg, void (*release)(void*)) {
  LOCK;
  std::shared_ptr<void> held(arg, release);
  int r = ready();
  if (r) return r;
  if (!validStream(s)) return INVALID_HANDLE;
  return enqueueOn(s, [fn, held]() -> int { return fn(held.get()) ? LAUNCH_FAILED : OK; });
}

// ---- for tests: what a GPU cannot tell ----

/** Kernel launches since the library loaded (or the last reset). */
EXPORT unsigned long long spanStandinLaunchCount() { return launches; }
/** Work put on a stream outside capture (launches, copies, memsets, event records, cuBLASLt matmuls, graph launches). */
EXPORT unsigned long long spanStandinSubmitCount() { return submissions; }
/** cuGraphLaunch calls outside capture. */
EXPORT unsigned long long spanStandinGraphLaunchCount() { return graphLaunches; }
EXPORT void spanStandinResetCounters() { launches = submissions = graphLaunches = 0; }
/** The message of the last failed call ("" if none). */
EXPORT const char* spanStandinLastError() { return lastError.c_str(); }
/** Bytes and number of live device allocations (cuMemAlloc less cuMemFree). */
EXPORT size_t spanStandinLiveBytes() { return span_standin::liveBytes(); }
EXPORT size_t spanStandinLiveAllocations() { return span_standin::liveCount(); }
