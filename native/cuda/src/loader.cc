// dlopen/dlsym of the CUDA driver, NVRTC and cuBLASLt with the prototypes of abi.h. Driver
// entry points are taken by their versioned names (cuDeviceTotalMem_v2, cuMemGetInfo_v2,
// cuDevicePrimaryCtxRelease_v2), which is what cuda.h maps the plain names to since CUDA 4/11.
#include "loader.h"

#include <dlfcn.h>

#include "abi.h"

namespace span_cuda {

Opened openFirst(const std::vector<std::string>& candidates) {
  Opened out;
  for (const auto& c : candidates) {
    void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) {
      out.handle = h;
      out.path = c;
      out.error.clear();
      return out;
    }
    const char* e = dlerror();
    if (out.error.empty()) out.error = e ? e : ("cannot open " + c);
  }
  if (candidates.empty()) out.error = "no candidate path";
  return out;
}

// The backend's open context, or null (device.cc, in the addon); a weak reference, so tools that
// link the loader alone (tools/nvrtc-compile.cc) build without the device runtime.
__attribute__((weak)) SPAN_CUcontext openContext();

namespace {

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(dlsym(lib, name));
}

std::string errorName(void* lib, SPAN_CUresult r) {
  auto getName = sym<span_cuGetErrorName_t>(lib, "cuGetErrorName");
  const char* s = nullptr;
  if (getName && getName(r, &s) == SPAN_CUDA_SUCCESS && s) return s;
  return "CUresult " + std::to_string(r);
}

/** Free memory through the primary context (retained and released again). */
void freeMemory(void* lib, SPAN_CUdevice dev, DeviceInfo& info) {
  auto retain = sym<span_cuDevicePrimaryCtxRetain_t>(lib, "cuDevicePrimaryCtxRetain");
  auto release = sym<span_cuDevicePrimaryCtxRelease_v2_t>(lib, "cuDevicePrimaryCtxRelease_v2");
  auto setCurrent = sym<span_cuCtxSetCurrent_t>(lib, "cuCtxSetCurrent");
  auto memInfo = sym<span_cuMemGetInfo_v2_t>(lib, "cuMemGetInfo_v2");
  if (!retain || !release || !setCurrent || !memInfo) return;
  SPAN_CUcontext ctx = nullptr;
  if (retain(&ctx, dev) != SPAN_CUDA_SUCCESS) return;
  size_t total = 0;
  if (setCurrent(ctx) == SPAN_CUDA_SUCCESS) memInfo(&info.freeMem, &total);
  // The backend's context stays current when it is open (a probe after the start: doctor, the memory plan)
  setCurrent(openContext ? openContext() : nullptr);
  release(dev);
}

}  // namespace

DeviceInfo queryDevice(void* lib, int ordinal) {
  DeviceInfo info;
  auto init = sym<span_cuInit_t>(lib, "cuInit");
  auto version = sym<span_cuDriverGetVersion_t>(lib, "cuDriverGetVersion");
  auto count = sym<span_cuDeviceGetCount_t>(lib, "cuDeviceGetCount");
  auto get = sym<span_cuDeviceGet_t>(lib, "cuDeviceGet");
  auto name = sym<span_cuDeviceGetName_t>(lib, "cuDeviceGetName");
  auto total = sym<span_cuDeviceTotalMem_v2_t>(lib, "cuDeviceTotalMem_v2");
  auto attr = sym<span_cuDeviceGetAttribute_t>(lib, "cuDeviceGetAttribute");
  if (!init || !version || !count || !get || !name || !total || !attr) {
    info.error = "libcuda lacks a driver entry point span needs (cuInit … cuDeviceTotalMem_v2)";
    return info;
  }
  version(&info.driverVersion);
  SPAN_CUresult r = init(0);
  if (r != SPAN_CUDA_SUCCESS) {
    info.error = "cuInit failed: " + errorName(lib, r);
    return info;
  }
  count(&info.deviceCount);
  if (info.deviceCount == 0) {
    info.error = "the driver sees no CUDA device";
    return info;
  }
  SPAN_CUdevice dev = 0;
  if ((r = get(&dev, ordinal)) != SPAN_CUDA_SUCCESS) {
    info.error = "device " + std::to_string(ordinal) + ": " + errorName(lib, r) + " (" + std::to_string(info.deviceCount) + " found)";
    return info;
  }
  char buf[256] = {0};
  name(buf, sizeof(buf) - 1, dev);
  info.name = buf;
  total(&info.totalMem, dev);
  attr(&info.ccMajor, SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  attr(&info.ccMinor, SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  attr(&info.smCount, SPAN_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  freeMemory(lib, dev, info);
  return info;
}

int nvrtcVersion(void* lib) {
  auto f = lib ? sym<span_nvrtcVersion_t>(lib, "nvrtcVersion") : nullptr;
  int major = 0, minor = 0;
  if (!f || f(&major, &minor) != SPAN_NVRTC_SUCCESS) return -1;
  return major * 1000 + minor * 10;
}

long cublasLtVersion(void* lib) {
  auto f = lib ? sym<span_cublasLtGetVersion_t>(lib, "cublasLtGetVersion") : nullptr;
  return f ? static_cast<long>(f()) : -1;
}

}  // namespace span_cuda
