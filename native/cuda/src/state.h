// The device runtime's shared state (device.cc, kernels.cc, gemm.cc): the dlsym'd entry points
// of abi.h, the context and stream, the allocator's tables, pending reads, modules and cuBLASLt.
#ifndef SPAN_CUDA_STATE_H
#define SPAN_CUDA_STATE_H

#include <dlfcn.h>

#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "abi.h"

namespace span_cuda {

struct PendingRead {
  void* host = nullptr;
  size_t bytes = 0;
  SPAN_CUevent event = nullptr;
};

struct State {
  bool open = false;
  int ordinal = 0, arch = 0;
  SPAN_CUdevice dev = 0;
  SPAN_CUcontext ctx = nullptr;
  SPAN_CUstream stream = nullptr;
  // driver
  span_cuInit_t cuInit;
  span_cuDeviceGet_t cuDeviceGet;
  span_cuDeviceGetAttribute_t cuDeviceGetAttribute;
  span_cuGetErrorName_t cuGetErrorName;
  span_cuGetErrorString_t cuGetErrorString;
  span_cuDevicePrimaryCtxRetain_t cuCtxRetain;
  span_cuCtxSetCurrent_t cuCtxSetCurrent;
  span_cuCtxSynchronize_t cuCtxSynchronize;
  span_cuMemAlloc_v2_t cuMemAlloc;
  span_cuMemFree_v2_t cuMemFree;
  span_cuMemAllocHost_v2_t cuMemAllocHost;
  span_cuMemFreeHost_t cuMemFreeHost;
  span_cuMemcpyHtoDAsync_v2_t cuMemcpyHtoDAsync;
  span_cuMemcpyDtoHAsync_v2_t cuMemcpyDtoHAsync;
  span_cuMemcpyDtoDAsync_v2_t cuMemcpyDtoDAsync;
  span_cuMemsetD32Async_t cuMemsetD32Async;
  span_cuStreamCreate_t cuStreamCreate;
  span_cuStreamSynchronize_t cuStreamSynchronize;
  span_cuEventCreate_t cuEventCreate;
  span_cuEventDestroy_v2_t cuEventDestroy;
  span_cuEventRecord_t cuEventRecord;
  span_cuEventQuery_t cuEventQuery;
  span_cuModuleLoadData_t cuModuleLoadData;
  span_cuModuleGetFunction_t cuModuleGetFunction;
  span_cuLaunchKernel_t cuLaunchKernel;
  // NVRTC
  span_nvrtcGetErrorString_t nvrtcGetErrorString;
  span_nvrtcCreateProgram_t nvrtcCreateProgram;
  span_nvrtcDestroyProgram_t nvrtcDestroyProgram;
  span_nvrtcCompileProgram_t nvrtcCompileProgram;
  span_nvrtcGetProgramLogSize_t nvrtcGetProgramLogSize;
  span_nvrtcGetProgramLog_t nvrtcGetProgramLog;
  span_nvrtcGetCUBINSize_t nvrtcGetCUBINSize;
  span_nvrtcGetCUBIN_t nvrtcGetCUBIN;
  // cuBLASLt
  span_cublasLtCreate_t ltCreate;
  span_cublasLtMatmulDescCreate_t ltDescCreate;
  span_cublasLtMatmulDescDestroy_t ltDescDestroy;
  span_cublasLtMatmulDescSetAttribute_t ltDescSet;
  span_cublasLtMatrixLayoutCreate_t ltLayoutCreate;
  span_cublasLtMatrixLayoutDestroy_t ltLayoutDestroy;
  span_cublasLtMatrixLayoutSetAttribute_t ltLayoutSet;
  span_cublasLtMatmulPreferenceCreate_t ltPrefCreate;
  span_cublasLtMatmulPreferenceDestroy_t ltPrefDestroy;
  span_cublasLtMatmulPreferenceSetAttribute_t ltPrefSet;
  span_cublasLtMatmulAlgoGetHeuristic_t ltHeuristic;
  span_cublasLtMatmul_t ltMatmul;
  SPAN_cublasLtHandle_t lt = nullptr;
  SPAN_CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  // allocator
  std::map<size_t, std::vector<uint64_t>> freeLists;
  std::unordered_map<uint64_t, size_t> sizes;
  size_t liveBytes = 0, peakBytes = 0, cachedBytes = 0, deviceBytes = 0;
  // reads, modules
  std::unordered_map<int, PendingRead> reads;
  int lastRead = 0;
  std::vector<SPAN_CUmodule> modules;
  std::vector<SPAN_CUfunction> functions;
};

State& state();
std::string cuError(const char* api, SPAN_CUresult r);
std::string bindNvrtc(void* lib, State& s);
std::string bindLt(void* lib, State& s);
std::string ltOpen(State& s);

/** dlsym of `name` from `lib` into `f`; false where the library lacks it. */
template <class F>
bool bindSymbol(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// In a function of (void* lib, State& s) returning std::string (bindDriver, bindNvrtc, bindLt):
// binds s.field to `name`, or returns the name that is missing.
#define SPAN_BIND(field, name) \
  if (!bindSymbol(lib, name, s.field)) return name;

}  // namespace span_cuda

#endif
