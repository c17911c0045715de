// The CUDA driver and NVRTC entry points the C++ test harnesses call (standin/harness.cc,
// fused/fused-harness.cc and the harnesses that include it), dlopen'd from a folder of stand-ins
// through the prototypes of native/cuda/src/abi.h as the cuda addon opens the real libraries.
// Header-only: each harness is one translation unit. Include after <dlfcn.h>, <cstdio>, <cstdlib>,
// <string> and "abi.h".
#ifndef SPAN_TEST_HARNESS_API_H
#define SPAN_TEST_HARNESS_API_H

namespace {

#define API(name) span_##name##_t name = nullptr
struct Api {
  API(cuInit);
  API(cuDeviceGet);
  API(cuDevicePrimaryCtxRetain);
  API(cuCtxSetCurrent);
  API(cuGetErrorName);
  API(cuMemAlloc_v2);
  API(cuMemFree_v2);
  API(cuMemcpyHtoD_v2);
  API(cuMemcpyDtoH_v2);
  API(cuMemsetD8_v2);
  API(cuMemsetD32_v2);
  API(cuModuleLoadData);
  API(cuModuleGetFunction);
  API(cuFuncSetAttribute);
  API(cuLaunchKernel);
  API(cuCtxSynchronize);
  API(cuStreamCreate);
  API(cuEventCreate);
  API(cuEventRecord);
  API(cuEventSynchronize);
  API(cuEventQuery);
  API(cuMemcpyDtoHAsync_v2);
  API(nvrtcCreateProgram);
  API(nvrtcCompileProgram);
  API(nvrtcGetProgramLogSize);
  API(nvrtcGetProgramLog);
  API(nvrtcGetCUBINSize);
  API(nvrtcGetCUBIN);
  API(nvrtcGetPTXSize);
  API(nvrtcGetPTX);
  API(nvrtcGetErrorString);
  const char* (*lastError)() = nullptr;
  unsigned long long (*launchCount)() = nullptr;
} A;
#undef API

/** The folder of native/cuda/kernels/ the harness compiles from (its command line names it). */
std::string kernels;

/** Opens DIR's libcuda.so.1 and libnvrtc.so.13 and binds A; prints {"error"} and exits 2 where either does not open. */
#define LOAD(lib, name) A.name = reinterpret_cast<decltype(A.name)>(dlsym(lib, #name))
void load(const std::string& dir) {
  void* cu = dlopen((dir + "/libcuda.so.1").c_str(), RTLD_NOW | RTLD_GLOBAL);
  void* rtc = dlopen((dir + "/libnvrtc.so.13").c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!cu || !rtc) printf("{\"error\":\"dlopen: %s\"}\n", dlerror()), exit(2);
  LOAD(cu, cuInit), LOAD(cu, cuDeviceGet), LOAD(cu, cuDevicePrimaryCtxRetain), LOAD(cu, cuCtxSetCurrent), LOAD(cu, cuGetErrorName);
  LOAD(cu, cuMemAlloc_v2), LOAD(cu, cuMemFree_v2), LOAD(cu, cuMemcpyHtoD_v2), LOAD(cu, cuMemcpyDtoH_v2), LOAD(cu, cuMemsetD8_v2), LOAD(cu, cuMemsetD32_v2);
  LOAD(cu, cuModuleLoadData), LOAD(cu, cuModuleGetFunction), LOAD(cu, cuFuncSetAttribute), LOAD(cu, cuLaunchKernel), LOAD(cu, cuCtxSynchronize);
  LOAD(cu, cuStreamCreate), LOAD(cu, cuEventCreate), LOAD(cu, cuEventRecord), LOAD(cu, cuEventSynchronize), LOAD(cu, cuEventQuery), LOAD(cu, cuMemcpyDtoHAsync_v2);
  LOAD(rtc, nvrtcCreateProgram), LOAD(rtc, nvrtcCompileProgram), LOAD(rtc, nvrtcGetProgramLogSize), LOAD(rtc, nvrtcGetProgramLog);
  LOAD(rtc, nvrtcGetCUBINSize), LOAD(rtc, nvrtcGetCUBIN), LOAD(rtc, nvrtcGetPTXSize), LOAD(rtc, nvrtcGetPTX), LOAD(rtc, nvrtcGetErrorString);
  A.lastError = reinterpret_cast<const char* (*)()>(dlsym(cu, "spanStandinLastError"));
  A.launchCount = reinterpret_cast<unsigned long long (*)()>(dlsym(cu, "spanStandinLaunchCount"));
}
#undef LOAD

// A driver call that must succeed: else the harness's own failed(result, call) reports it and exits.
#define CHECK(call)                         \
  do {                                      \
    if (int r_ = (call)) failed(r_, #call); \
  } while (0)

/** cuInit, device 0 and its primary context made current; `failed(result, call)` (which exits) at the first error. */
void initDevice(void (*failed)(int, const char*)) {
  SPAN_CUdevice dev;
  SPAN_CUcontext ctx;
  if (int r = A.cuInit(0)) failed(r, "A.cuInit(0)");
  if (int r = A.cuDeviceGet(&dev, 0)) failed(r, "A.cuDeviceGet(&dev, 0)");
  if (int r = A.cuDevicePrimaryCtxRetain(&ctx, dev)) failed(r, "A.cuDevicePrimaryCtxRetain(&ctx, dev)");
  if (int r = A.cuCtxSetCurrent(ctx)) failed(r, "A.cuCtxSetCurrent(ctx)");
}

}  // namespace

#endif
