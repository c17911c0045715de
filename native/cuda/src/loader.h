// Run-time loading of the CUDA libraries (dlopen) and the device query of span's cuda addon.
#ifndef SPAN_CUDA_LOADER_H
#define SPAN_CUDA_LOADER_H

#include <string>
#include <vector>

namespace span_cuda {

/** One library: the path that opened (empty if none) and why each candidate failed. */
struct Opened {
  void* handle = nullptr;
  std::string path;
  std::string error;
};

/** dlopen of each candidate in order (RTLD_NOW | RTLD_GLOBAL); the first that opens wins. */
Opened openFirst(const std::vector<std::string>& candidates);

/** What the device query found, or the one-line reason it failed (error non-empty). */
struct DeviceInfo {
  std::string error;
  int driverVersion = 0;
  int deviceCount = 0;
  std::string name;
  size_t totalMem = 0;
  size_t freeMem = 0;
  int ccMajor = 0;
  int ccMinor = 0;
  int smCount = 0;
};

/** cuInit, the driver version, and device `ordinal`'s name, memory (free through its primary context), CC and SMs. */
DeviceInfo queryDevice(void* libcuda, int ordinal);

/** nvrtcVersion as major*1000 + minor*10 (CUDA's convention), or -1. */
int nvrtcVersion(void* libnvrtc);

/** cublasLtGetVersion (e.g. 130100), or -1. */
long cublasLtVersion(void* libcublasLt);

}  // namespace span_cuda

#endif
