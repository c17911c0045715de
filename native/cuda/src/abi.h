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

/* Under tools/check-cuda-abi.sh (SPAN_ABI_CHECK, real headers included first) the handle and
   status types are the headers' own, so that every prototype below is compared exactly; the
   script checks separately that each has the size of the type declared here. */
#ifdef SPAN_ABI_CHECK
typedef CUresult SPAN_CUresult;
typedef CUdevice SPAN_CUdevice;
typedef CUcontext SPAN_CUcontext;
typedef CUstream SPAN_CUstream;
typedef CUdeviceptr SPAN_CUdeviceptr;
typedef nvrtcResult SPAN_nvrtcResult;
typedef cublasStatus_t SPAN_cublasStatus_t;
typedef CUdevice_attribute SPAN_CUdevice_attribute;
#else
typedef int SPAN_CUresult;
typedef int SPAN_CUdevice;
typedef struct SPAN_CUctx_st* SPAN_CUcontext;
typedef struct SPAN_CUstream_st* SPAN_CUstream;
typedef unsigned long long SPAN_CUdeviceptr; /* CUdeviceptr_v2 */
typedef int SPAN_nvrtcResult;
typedef int SPAN_cublasStatus_t;
typedef int SPAN_CUdevice_attribute;
#endif

/* ---- driver API (cuda.h) ---- */

#define SPAN_CUDA_SUCCESS 0
#define SPAN_CUDA_ERROR_NOT_INITIALIZED 3
#define SPAN_CUDA_ERROR_INSUFFICIENT_DRIVER 35
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

/* ---- NVRTC (nvrtc.h) ---- */
#define SPAN_NVRTC_SUCCESS 0
typedef SPAN_nvrtcResult (*span_nvrtcVersion_t)(int* major, int* minor);

/* ---- cuBLASLt (cublasLt.h, cublas_api.h, library_types.h) ---- */
#define SPAN_CUBLAS_STATUS_SUCCESS 0
#define SPAN_CUBLAS_OP_N 0
#define SPAN_CUBLAS_OP_T 1
#define SPAN_CUDA_R_32F 0
#define SPAN_CUDA_R_16BF 14
#define SPAN_CUBLAS_COMPUTE_32F 68
#define SPAN_CUBLAS_COMPUTE_32F_FAST_16BF 75
#define SPAN_CUBLAS_COMPUTE_32F_FAST_TF32 77
#define SPAN_CUBLASLT_MATMUL_DESC_COMPUTE_TYPE 0
#define SPAN_CUBLASLT_MATMUL_DESC_SCALE_TYPE 1
#define SPAN_CUBLASLT_MATMUL_DESC_TRANSA 3
#define SPAN_CUBLASLT_MATMUL_DESC_TRANSB 4
#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE 7
#define SPAN_CUBLASLT_MATMUL_DESC_BIAS_POINTER 8
#define SPAN_CUBLASLT_EPILOGUE_DEFAULT 1
#define SPAN_CUBLASLT_EPILOGUE_BIAS 4
#define SPAN_CUBLASLT_MATRIX_LAYOUT_ORDER 1
#define SPAN_CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT 5
#define SPAN_CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET 6
#define SPAN_CUBLASLT_ORDER_COL 0
#define SPAN_CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES 1

/* cublasLtMatmulAlgo_t and cublasLtMatmulHeuristicResult_t: layouts checked field by field */
typedef struct {
  uint64_t data[8];
} SPAN_cublasLtMatmulAlgo_t;

typedef struct {
  SPAN_cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  SPAN_cublasStatus_t state;
  float wavesCount;
  int reserved[4];
} SPAN_cublasLtMatmulHeuristicResult_t;

typedef size_t (*span_cublasLtGetVersion_t)(void);
typedef size_t (*span_cublasLtGetCudartVersion_t)(void);

#ifdef __cplusplus
}
#endif

#endif
