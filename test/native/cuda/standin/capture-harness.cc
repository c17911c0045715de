// Drives the libcuda stand-in's stream capture directly (capture.test.ts): what is recorded and
// not run, what replay runs, and what capture refuses. Prints one JSON object of named results.
//   capture-harness STANDIN_DIR
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "../../../../native/cuda/src/abi.h"

namespace {
template <class F>
F sym(void* lib, const char* name) {
  auto f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) printf("{\"error\":\"missing %s\"}\n", name), exit(2);
  return f;
}
std::string out;
void field(const char* name, long long v) { out += (out.empty() ? "" : ",") + std::string("\"") + name + "\":" + std::to_string(v); }
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* cu = dlopen((std::string(argv[1]) + "/libcuda.so.1").c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!cu) return printf("{\"error\":\"dlopen\"}\n"), 2;
  auto init = sym<span_cuInit_t>(cu, "cuInit");
  auto retain = sym<span_cuDevicePrimaryCtxRetain_t>(cu, "cuDevicePrimaryCtxRetain");
  auto setCtx = sym<span_cuCtxSetCurrent_t>(cu, "cuCtxSetCurrent");
  auto alloc = sym<span_cuMemAlloc_v2_t>(cu, "cuMemAlloc_v2");
  auto allocHost = sym<span_cuMemAllocHost_v2_t>(cu, "cuMemAllocHost_v2");
  auto streamCreate = sym<span_cuStreamCreate_t>(cu, "cuStreamCreate");
  auto streamSync = sym<span_cuStreamSynchronize_t>(cu, "cuStreamSynchronize");
  auto memsetAsync = sym<span_cuMemsetD32Async_t>(cu, "cuMemsetD32Async");
  auto h2dAsync = sym<span_cuMemcpyHtoDAsync_v2_t>(cu, "cuMemcpyHtoDAsync_v2");
  auto d2h = sym<span_cuMemcpyDtoH_v2_t>(cu, "cuMemcpyDtoH_v2");
  auto eventCreate = sym<span_cuEventCreate_t>(cu, "cuEventCreate");
  auto eventRecord = sym<span_cuEventRecord_t>(cu, "cuEventRecord");
  auto eventQuery = sym<span_cuEventQuery_t>(cu, "cuEventQuery");
  auto begin = sym<span_cuStreamBeginCapture_v2_t>(cu, "cuStreamBeginCapture_v2");
  auto end = sym<span_cuStreamEndCapture_t>(cu, "cuStreamEndCapture");
  auto isCapturing = sym<span_cuStreamIsCapturing_t>(cu, "cuStreamIsCapturing");
  auto instantiate = sym<span_cuGraphInstantiateWithFlags_t>(cu, "cuGraphInstantiateWithFlags");
  auto launch = sym<span_cuGraphLaunch_t>(cu, "cuGraphLaunch");
  auto graphLaunches = sym<unsigned long long (*)()>(cu, "spanStandinGraphLaunchCount");
  SPAN_CUcontext ctx;
  SPAN_CUstream st;
  init(0), retain(&ctx, 0), setCtx(ctx), streamCreate(&st, SPAN_CU_STREAM_NON_BLOCKING);
  SPAN_CUdeviceptr buf;
  alloc(&buf, 64);
  uint32_t* host = nullptr;
  allocHost(reinterpret_cast<void**>(&host), 64);
  uint32_t got[16];

  // Recorded, not run; replay runs it with the values of capture time, reading pinned memory at launch.
  memsetAsync(buf, 1, 16, st), streamSync(st);
  field("begin", begin(st, SPAN_CU_STREAM_CAPTURE_MODE_GLOBAL));
  host[0] = 7;
  field("memsetCaptured", memsetAsync(buf, 5, 16, st));
  field("h2dPinnedCaptured", h2dAsync(buf, host, 4, st));
  SPAN_CUstreamCaptureStatus status;
  isCapturing(st, &status), field("statusActive", status);
  SPAN_CUgraph g = nullptr;
  field("end", end(st, &g));
  d2h(got, buf, 64), field("afterCapture", got[1]);  // still 1: nothing ran
  SPAN_CUgraphExec exec = nullptr;
  field("instantiate", instantiate(&exec, g, 0));
  host[0] = 9;  // the graph reads the staging buffer when it runs
  field("launch", launch(exec, st)), streamSync(st);
  d2h(got, buf, 64), field("replayFirst", got[0]), field("replayRest", got[1]);
  field("graphLaunches", static_cast<long long>(graphLaunches()));

  // Refused during a GLOBAL capture, each invalidating it.
  const auto refused = [&](const char* name, auto call) {
    begin(st, SPAN_CU_STREAM_CAPTURE_MODE_GLOBAL);
    field(name, call());
    isCapturing(st, &status);
    field((std::string(name) + "Status").c_str(), status);
    SPAN_CUgraph h = nullptr;
    field((std::string(name) + "End").c_str(), end(st, &h));
  };
  refused("syncCopy", [&] { return d2h(got, buf, 64); });
  refused("streamSync", [&] { return streamSync(st); });
  refused("alloc", [&] { SPAN_CUdeviceptr p; return alloc(&p, 256); });
  uint32_t pageable[4] = {1, 2, 3, 4};
  refused("pageableH2D", [&] { return h2dAsync(buf, pageable, 16, st); });
  // RELAXED allows the allocation; an event recorded in a capture cannot be queried.
  begin(st, SPAN_CU_STREAM_CAPTURE_MODE_RELAXED);
  SPAN_CUdeviceptr p2;
  field("relaxedAlloc", alloc(&p2, 256));
  SPAN_CUevent ev;
  eventCreate(&ev, 0), eventRecord(ev, st);
  field("capturedEventQuery", eventQuery(ev));
  field("relaxedEnd", end(st, &g));
  field("legacyStream", begin(nullptr, SPAN_CU_STREAM_CAPTURE_MODE_GLOBAL));
  printf("{%s}\n", out.c_str());
  return 0;
}
