// The few CUDA driver, NVRTC and cuBLASLt types, constants and prototypes span's cuda addon
// uses, declared by hand so that it builds with no CUDA headers, nvcc or GPU (the libraries
// are opened at run time with dlopen: loader.cc). Every value here must equal the real
// headers' (cuda.h, nvrtc.h, cublasLt.h, library_types.h): tools/check-cuda-abi.sh compiles
// a program against them that compares each one, on a machine that has the headers.
// Names are the headers' own with a SPAN_ prefix, so the check can pair them mechanically.
#ifndef SPAN_CUDA_ABI_H
#define SPAN_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Under tools/check-cuda-abi.sh, SPAN_ABI_CHECK_CUDA, _NVRTC and _CUBLASLT say which real
   headers were included first; the handle, enum and status types of that header's section are
   then the header's own, so that each of its prototypes is compared exactly (the script checks
   separately that each has the size of the type declared here). A section whose header is
   absent is compiled with span's own types and not compared. */
/* ---- driver API (cuda.h) ---- */
#ifdef SPAN_ABI_CHECK_CUDA
typedef CUresult SPAN_CUresult;
typedef CUdevice SPAN_CUdevice;
typedef CUcontext SPAN_CUcontext;
typedef CUstream SPAN_CUstream;
typedef CUdeviceptr SPAN_CUdeviceptr;
typedef CUdevice_attribute SPAN_CUdevice_attribute;
typedef CUmodule SPAN_CUmodule;
typedef CUfunction SPAN_CUfunction;
typedef CUevent SPAN_CUevent;
typedef CUfunction_attribute SPAN_CUfunction_attribute;
typedef CUgraph SPAN_CUgraph;
typedef CUgraphExec SPAN_CUgraphExec;
typedef CUstreamCaptureMode SPAN_CUstreamCaptureMode;
typedef CUstreamCaptureStatus SPAN_CUstreamCaptureStatus;
#else
typedef int SPAN_CUresult;
typedef int SPAN_CUdevice;
typedef struct SPAN_CUctx_st* SPAN_CUcontext;
typedef struct SPAN_CUstream_st* SPAN_CUstream;
typedef unsigned long long SPAN_CUdeviceptr; /* CUdeviceptr_v2 */
typedef int SPAN_CUdevice_attribute;
typedef struct SPAN_CUmod_st* SPAN_CUmodule;
typedef struct SPAN_CUfunc_st* SPAN_CUfunction;
typedef struct SPAN_CUevent_st* SPAN_CUevent;
typedef int SPAN_CUfunction_attribute;
typedef struct SPAN_CUgraph_st* SPAN_CUgraph;
typedef struct SPAN_CUgraphExec_st* SPAN_CUgraphExec;
typedef int SPAN_CUstreamCaptureMode;
typedef int SPAN_CUstreamCaptureStatus;
#endif

#define SPAN_CUDA_SUCCESS 0
#define SPAN_CUDA_ERROR_NOT_INITIALIZED 3
#define SPAN_CUDA_ERROR_NO_DEVICE 100
#define SPAN_CUDA_ERROR_INVALID_DEVICE 101
#define SPAN_CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT 16
#define SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR 75
#define SPAN_CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR 76
#define SPAN_CU_STREAM_NON_BLOCKING 1

typedef SPAN_CUresult (*span_cuInit_t)(unsigned int flags);
typedef SPAN_CUresult (*span_cuDriverGetVersion_t)(int* version);
typedef SPAN_CUresult (*span_cuDeviceGetCount_t)(int* count);
typedef SPAN_CUresult (*span_cuDeviceGet_t)(SPAN_CUdevice* device, int ordinal);
typedef SPAN_CUresult (*span_cuDeviceGetName_t)(char* name, int len, SPAN_CUdevice dev);
typedef SPAN_CUresult (*span_cuDeviceTotalMem_v2_t)(size_t* bytes, SPAN_CUdevice dev);
typedef SPAN_CUresult (*span_cuDeviceGetAttribute_t)(int* value, SPAN_CUdevice_attribute attrib, SPAN_CUdevice dev);
typedef SPAN_CUresult (*span_cuGetErrorName_t)(SPAN_CUresult error, const char** str);
typedef SPAN_CUresult (*span_cuDevicePrimaryCtxRetain_t)(SPAN_CUcontext* ctx, SPAN_CUdevice dev);
typedef SPAN_CUresult (*span_cuDevicePrimaryCtxRelease_v2_t)(SPAN_CUdevice dev);
typedef SPAN_CUresult (*span_cuCtxSetCurrent_t)(SPAN_CUcontext ctx);
typedef SPAN_CUresult (*span_cuMemGetInfo_v2_t)(size_t* free_bytes, size_t* total_bytes);

/* The driver calls of the cuda backend (memory, streams, events, modules, launches): versioned
   names where cuda.h maps the plain one (cuMemAlloc → cuMemAlloc_v2 …). The test-only stand-in
   (native/cuda/standin/cuda) exports each of these. */
#define SPAN_CUDA_ERROR_INVALID_VALUE 1
#define SPAN_CUDA_ERROR_OUT_OF_MEMORY 2
#define SPAN_CUDA_ERROR_INVALID_CONTEXT 201
#define SPAN_CUDA_ERROR_INVALID_HANDLE 400
#define SPAN_CUDA_ERROR_NOT_FOUND 500
#define SPAN_CUDA_ERROR_NOT_READY 600
#define SPAN_CUDA_ERROR_ILLEGAL_ADDRESS 700
#define SPAN_CUDA_ERROR_LAUNCH_FAILED 719
#define SPAN_CU_EVENT_DISABLE_TIMING 2
#define SPAN_CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
#define SPAN_CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97
typedef SPAN_CUresult (*span_cuGetErrorString_t)(SPAN_CUresult error, const char** str);
typedef SPAN_CUresult (*span_cuCtxSynchronize_t)(void);
typedef SPAN_CUresult (*span_cuMemAlloc_v2_t)(SPAN_CUdeviceptr* dptr, size_t bytes);
typedef SPAN_CUresult (*span_cuMemFree_v2_t)(SPAN_CUdeviceptr dptr);
typedef SPAN_CUresult (*span_cuMemAllocHost_v2_t)(void** pp, size_t bytes);
typedef SPAN_CUresult (*span_cuMemFreeHost_t)(void* p);
typedef SPAN_CUresult (*span_cuMemcpyHtoD_v2_t)(SPAN_CUdeviceptr dst, const void* src, size_t bytes);
typedef SPAN_CUresult (*span_cuMemcpyDtoH_v2_t)(void* dst, SPAN_CUdeviceptr src, size_t bytes);
typedef SPAN_CUresult (*span_cuMemcpyDtoD_v2_t)(SPAN_CUdeviceptr dst, SPAN_CUdeviceptr src, size_t bytes);
typedef SPAN_CUresult (*span_cuMemcpyHtoDAsync_v2_t)(SPAN_CUdeviceptr dst, const void* src, size_t bytes, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuMemcpyDtoHAsync_v2_t)(void* dst, SPAN_CUdeviceptr src, size_t bytes, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuMemcpyDtoDAsync_v2_t)(SPAN_CUdeviceptr dst, SPAN_CUdeviceptr src, size_t bytes, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuMemsetD8_v2_t)(SPAN_CUdeviceptr dst, unsigned char value, size_t n);
typedef SPAN_CUresult (*span_cuMemsetD32_v2_t)(SPAN_CUdeviceptr dst, unsigned int value, size_t n);
typedef SPAN_CUresult (*span_cuMemsetD8Async_t)(SPAN_CUdeviceptr dst, unsigned char value, size_t n, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuMemsetD32Async_t)(SPAN_CUdeviceptr dst, unsigned int value, size_t n, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuStreamCreate_t)(SPAN_CUstream* stream, unsigned int flags);
typedef SPAN_CUresult (*span_cuStreamDestroy_v2_t)(SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuStreamSynchronize_t)(SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuStreamQuery_t)(SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuStreamWaitEvent_t)(SPAN_CUstream stream, SPAN_CUevent event, unsigned int flags);
typedef SPAN_CUresult (*span_cuEventCreate_t)(SPAN_CUevent* event, unsigned int flags);
typedef SPAN_CUresult (*span_cuEventDestroy_v2_t)(SPAN_CUevent event);
typedef SPAN_CUresult (*span_cuEventRecord_t)(SPAN_CUevent event, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuEventQuery_t)(SPAN_CUevent event);
typedef SPAN_CUresult (*span_cuEventSynchronize_t)(SPAN_CUevent event);
typedef SPAN_CUresult (*span_cuModuleLoadData_t)(SPAN_CUmodule* module, const void* image);
typedef SPAN_CUresult (*span_cuModuleUnload_t)(SPAN_CUmodule module);
typedef SPAN_CUresult (*span_cuModuleGetFunction_t)(SPAN_CUfunction* fn, SPAN_CUmodule module, const char* name);
typedef SPAN_CUresult (*span_cuFuncSetAttribute_t)(SPAN_CUfunction fn, SPAN_CUfunction_attribute attrib, int value);
typedef SPAN_CUresult (*span_cuLaunchKernel_t)(SPAN_CUfunction fn, unsigned int gridX, unsigned int gridY, unsigned int gridZ, unsigned int blockX,
                                               unsigned int blockY, unsigned int blockZ, unsigned int sharedMemBytes, SPAN_CUstream stream,
                                               void** kernelParams, void** extra);

/* Stream capture and graphs (docs/cuda-backend.md, "One step as a CUDA Graph"). Names as the
   symbols are exported in CUDA 11.8 and 13: cuda.h maps cuStreamBeginCapture to
   cuStreamBeginCapture_v2 in both; it maps cuGraphInstantiate to cuGraphInstantiate_v2 (11.8, with
   an error node and log) and to cuGraphInstantiateWithFlags (12+), so span calls
   cuGraphInstantiateWithFlags by that name, which both export with this prototype. */
#define SPAN_CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
#define SPAN_CUDA_ERROR_STREAM_CAPTURE_INVALIDATED 901
#define SPAN_CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD 908
#define SPAN_CU_STREAM_CAPTURE_STATUS_NONE 0
#define SPAN_CU_STREAM_CAPTURE_STATUS_ACTIVE 1
#define SPAN_CU_STREAM_CAPTURE_STATUS_INVALIDATED 2
#define SPAN_CU_STREAM_CAPTURE_MODE_GLOBAL 0
#define SPAN_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL 1
#define SPAN_CU_STREAM_CAPTURE_MODE_RELAXED 2
typedef SPAN_CUresult (*span_cuStreamBeginCapture_v2_t)(SPAN_CUstream stream, SPAN_CUstreamCaptureMode mode);
typedef SPAN_CUresult (*span_cuStreamEndCapture_t)(SPAN_CUstream stream, SPAN_CUgraph* graph);
typedef SPAN_CUresult (*span_cuStreamIsCapturing_t)(SPAN_CUstream stream, SPAN_CUstreamCaptureStatus* status);
typedef SPAN_CUresult (*span_cuGraphInstantiateWithFlags_t)(SPAN_CUgraphExec* exec, SPAN_CUgraph graph, unsigned long long flags);
typedef SPAN_CUresult (*span_cuGraphLaunch_t)(SPAN_CUgraphExec exec, SPAN_CUstream stream);
typedef SPAN_CUresult (*span_cuGraphExecDestroy_t)(SPAN_CUgraphExec exec);
typedef SPAN_CUresult (*span_cuGraphDestroy_t)(SPAN_CUgraph graph);

/* ---- NVRTC (nvrtc.h) ---- */
#ifdef SPAN_ABI_CHECK_NVRTC
typedef nvrtcResult SPAN_nvrtcResult;
typedef nvrtcProgram SPAN_nvrtcProgram;
#else
typedef int SPAN_nvrtcResult;
typedef struct SPAN_nvrtcProgram_st* SPAN_nvrtcProgram;
#endif
#define SPAN_NVRTC_SUCCESS 0
#define SPAN_NVRTC_ERROR_INVALID_OPTION 5
#define SPAN_NVRTC_ERROR_COMPILATION 6
typedef SPAN_nvrtcResult (*span_nvrtcVersion_t)(int* major, int* minor);
typedef const char* (*span_nvrtcGetErrorString_t)(SPAN_nvrtcResult result);
typedef SPAN_nvrtcResult (*span_nvrtcCreateProgram_t)(SPAN_nvrtcProgram* prog, const char* src, const char* name, int numHeaders,
                                                      const char* const* headers, const char* const* includeNames);
typedef SPAN_nvrtcResult (*span_nvrtcDestroyProgram_t)(SPAN_nvrtcProgram* prog);
typedef SPAN_nvrtcResult (*span_nvrtcCompileProgram_t)(SPAN_nvrtcProgram prog, int numOptions, const char* const* options);
typedef SPAN_nvrtcResult (*span_nvrtcGetProgramLogSize_t)(SPAN_nvrtcProgram prog, size_t* logSizeRet);
typedef SPAN_nvrtcResult (*span_nvrtcGetProgramLog_t)(SPAN_nvrtcProgram prog, char* log);
typedef SPAN_nvrtcResult (*span_nvrtcGetCUBINSize_t)(SPAN_nvrtcProgram prog, size_t* cubinSizeRet);
typedef SPAN_nvrtcResult (*span_nvrtcGetCUBIN_t)(SPAN_nvrtcProgram prog, char* cubin);
typedef SPAN_nvrtcResult (*span_nvrtcGetPTXSize_t)(SPAN_nvrtcProgram prog, size_t* size);
typedef SPAN_nvrtcResult (*span_nvrtcGetPTX_t)(SPAN_nvrtcProgram prog, char* ptx);

/* ---- cuBLASLt (cublasLt.h, cublas_api.h, library_types.h) ---- */
#ifdef SPAN_ABI_CHECK_CUBLASLT
typedef cublasStatus_t SPAN_cublasStatus_t;
typedef cublasLtHandle_t SPAN_cublasLtHandle_t;
typedef cublasLtMatmulDesc_t SPAN_cublasLtMatmulDesc_t;
typedef cublasLtMatrixLayout_t SPAN_cublasLtMatrixLayout_t;
typedef cublasLtMatmulPreference_t SPAN_cublasLtMatmulPreference_t;
typedef cublasComputeType_t SPAN_cublasComputeType_t;
typedef cudaDataType_t SPAN_cudaDataType_t;
typedef cublasLtMatmulDescAttributes_t SPAN_cublasLtMatmulDescAttributes_t;
typedef cublasLtMatrixLayoutAttribute_t SPAN_cublasLtMatrixLayoutAttribute_t;
typedef cublasLtMatmulPreferenceAttributes_t SPAN_cublasLtMatmulPreferenceAttributes_t;
typedef cudaStream_t SPAN_cudaStream_t;
#else
typedef int SPAN_cublasStatus_t;
typedef struct SPAN_cublasLtContext* SPAN_cublasLtHandle_t;
typedef struct SPAN_cublasLtMatmulDescOpaque* SPAN_cublasLtMatmulDesc_t;
typedef struct SPAN_cublasLtMatrixLayoutOpaque* SPAN_cublasLtMatrixLayout_t;
typedef struct SPAN_cublasLtMatmulPreferenceOpaque* SPAN_cublasLtMatmulPreference_t;
typedef int SPAN_cublasComputeType_t;
typedef int SPAN_cudaDataType_t;
typedef int SPAN_cublasLtMatmulDescAttributes_t;
typedef int SPAN_cublasLtMatrixLayoutAttribute_t;
typedef int SPAN_cublasLtMatmulPreferenceAttributes_t;
typedef struct SPAN_CUstream_st* SPAN_cudaStream_t; /* cudaStream_t is CUstream */
#endif

#define SPAN_CUBLAS_STATUS_SUCCESS 0
#define SPAN_CUBLAS_STATUS_NOT_INITIALIZED 1
#define SPAN_CUBLAS_STATUS_ALLOC_FAILED 3
#define SPAN_CUBLAS_STATUS_INVALID_VALUE 7
#define SPAN_CUBLAS_STATUS_EXECUTION_FAILED 13
#define SPAN_CUBLAS_STATUS_NOT_SUPPORTED 15
#define SPAN_CUBLAS_OP_N 0
#define SPAN_CUBLAS_OP_T 1
#define SPAN_CUDA_R_32F 0
#define SPAN_CUDA_R_16F 2
#define SPAN_CUDA_R_16BF 14
#define SPAN_CUBLAS_COMPUTE_32F 68
#define SPAN_CUBLAS_COMPUTE_32F_FAST_16BF 75
#define SPAN_CUBLAS_COMPUTE_32F_FAST_TF32 77
#define SPAN_CUBLASLT_POINTER_MODE_HOST 0
#define SPAN_CUBLASLT_POINTER_MODE_DEVICE 1
#define SPAN_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE 0
#define SPAN_CUBLASLT_MATMUL_DESC_SCALE_TYPE 1
#define SPAN_CUBLASLT_MATMUL_DESC_POINTER_MODE 2
#define SPAN_CUBLASLT_MATMUL_DESC_TRANSA 3
#define SPAN_CUBLASLT_MATMUL_DESC_TRANSB 4
#define SPAN_CUBLASLT_MATMUL_DESC_TRANSC 5
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE 7
#define SPAN_CUBLASLT_MATMUL_DESC_BIAS_POINTER 8
#define SPAN_CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE 10
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER 11
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD 12
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE 13
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE 22
#define SPAN_CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE 26
#define SPAN_CUBLASLT_EPILOGUE_DEFAULT 1
#define SPAN_CUBLASLT_EPILOGUE_RELU 2
#define SPAN_CUBLASLT_EPILOGUE_BIAS 4
#define SPAN_CUBLASLT_EPILOGUE_RELU_BIAS 6
#define SPAN_CUBLASLT_EPILOGUE_GELU 32
#define SPAN_CUBLASLT_EPILOGUE_GELU_AUX 160
#define SPAN_CUBLASLT_EPILOGUE_GELU_BIAS 36
#define SPAN_CUBLASLT_EPILOGUE_GELU_AUX_BIAS 164
#define SPAN_CUBLASLT_EPILOGUE_DGELU 192
#define SPAN_CUBLASLT_EPILOGUE_DGELU_BGRAD 208
#define SPAN_CUBLASLT_EPILOGUE_BGRADA 256
#define SPAN_CUBLASLT_EPILOGUE_BGRADB 512
#define SPAN_CUBLASLT_MATRIX_LAYOUT_TYPE 0
#define SPAN_CUBLASLT_MATRIX_LAYOUT_ORDER 1
#define SPAN_CUBLASLT_MATRIX_LAYOUT_ROWS 2
#define SPAN_CUBLASLT_MATRIX_LAYOUT_COLS 3
#define SPAN_CUBLASLT_MATRIX_LAYOUT_LD 4
#define SPAN_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT 5
#define SPAN_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET 6
#define SPAN_CUBLASLT_ORDER_COL 0
#define SPAN_CUBLASLT_ORDER_ROW 1
#define SPAN_CUBLASLT_MATMUL_PREF_SEARCH_MODE 0
#define SPAN_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t as span declares them (the script
   compares these, by size and field offsets, with the header's) */
typedef struct SPAN_cublasLtMatmulAlgo_own {
  uint64_t data[8];
} SPAN_cublasLtMatmulAlgo_own;

typedef struct SPAN_cublasLtMatmulHeuristicResult_own {
  SPAN_cublasLtMatmulAlgo_own algo;
  size_t workspaceSize;
  int state; /* cublasStatus_t */
  float wavesCount;
  int reserved[4];
} SPAN_cublasLtMatmulHeuristicResult_own;

#ifdef SPAN_ABI_CHECK_CUBLASLT
typedef cublasLtMatmulAlgo_t SPAN_cublasLtMatmulAlgo_t;
typedef cublasLtMatmulHeuristicResult_t SPAN_cublasLtMatmulHeuristicResult_t;
#else
typedef SPAN_cublasLtMatmulAlgo_own SPAN_cublasLtMatmulAlgo_t;
typedef SPAN_cublasLtMatmulHeuristicResult_own SPAN_cublasLtMatmulHeuristicResult_t;
#endif

typedef size_t (*span_cublasLtGetVersion_t)(void);
typedef size_t (*span_cublasLtGetCudartVersion_t)(void);
typedef SPAN_cublasStatus_t (*span_cublasLtCreate_t)(SPAN_cublasLtHandle_t* lightHandle);
typedef SPAN_cublasStatus_t (*span_cublasLtDestroy_t)(SPAN_cublasLtHandle_t lightHandle);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulDescCreate_t)(SPAN_cublasLtMatmulDesc_t* matmulDesc, SPAN_cublasComputeType_t computeType,
                                                            SPAN_cudaDataType_t scaleType);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulDescDestroy_t)(SPAN_cublasLtMatmulDesc_t matmulDesc);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulDescSetAttribute_t)(SPAN_cublasLtMatmulDesc_t matmulDesc, SPAN_cublasLtMatmulDescAttributes_t attr,
                                                                  const void* buf, size_t sizeInBytes);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulDescGetAttribute_t)(SPAN_cublasLtMatmulDesc_t matmulDesc, SPAN_cublasLtMatmulDescAttributes_t attr,
                                                                  void* buf, size_t sizeInBytes, size_t* sizeWritten);
typedef SPAN_cublasStatus_t (*span_cublasLtMatrixLayoutCreate_t)(SPAN_cublasLtMatrixLayout_t* matLayout, SPAN_cudaDataType_t type, uint64_t rows,
                                                              uint64_t cols, int64_t ld);
typedef SPAN_cublasStatus_t (*span_cublasLtMatrixLayoutDestroy_t)(SPAN_cublasLtMatrixLayout_t matLayout);
typedef SPAN_cublasStatus_t (*span_cublasLtMatrixLayoutSetAttribute_t)(SPAN_cublasLtMatrixLayout_t matLayout,
                                                                    SPAN_cublasLtMatrixLayoutAttribute_t attr, const void* buf, size_t sizeInBytes);
typedef SPAN_cublasStatus_t (*span_cublasLtMatrixLayoutGetAttribute_t)(SPAN_cublasLtMatrixLayout_t matLayout,
                                                                    SPAN_cublasLtMatrixLayoutAttribute_t attr, void* buf, size_t sizeInBytes,
                                                                    size_t* sizeWritten);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulPreferenceCreate_t)(SPAN_cublasLtMatmulPreference_t* pref);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulPreferenceDestroy_t)(SPAN_cublasLtMatmulPreference_t pref);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulPreferenceSetAttribute_t)(SPAN_cublasLtMatmulPreference_t pref,
                                                                        SPAN_cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                                        size_t sizeInBytes);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmulAlgoGetHeuristic_t)(SPAN_cublasLtHandle_t lightHandle, SPAN_cublasLtMatmulDesc_t operationDesc,
                                                                  SPAN_cublasLtMatrixLayout_t Adesc, SPAN_cublasLtMatrixLayout_t Bdesc,
                                                                  SPAN_cublasLtMatrixLayout_t Cdesc, SPAN_cublasLtMatrixLayout_t Ddesc,
                                                                  SPAN_cublasLtMatmulPreference_t preference, int requestedAlgoCount,
                                                                  SPAN_cublasLtMatmulHeuristicResult_t heuristicResultsArray[], int* returnAlgoCount);
typedef SPAN_cublasStatus_t (*span_cublasLtMatmul_t)(SPAN_cublasLtHandle_t lightHandle, SPAN_cublasLtMatmulDesc_t computeDesc, const void* alpha,
                                                  const void* A, SPAN_cublasLtMatrixLayout_t Adesc, const void* B,
                                                  SPAN_cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C,
                                                  SPAN_cublasLtMatrixLayout_t Cdesc, void* D, SPAN_cublasLtMatrixLayout_t Ddesc,
                                                  const SPAN_cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
                                                  SPAN_cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
