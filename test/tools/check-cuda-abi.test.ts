import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

// tools/check-cuda-abi.sh, the check of native/cuda/src/abi.h against the real CUDA headers,
// run here on stand-in headers written below (the real ones are not on this machine): with
// the values and prototypes of the real headers it passes; a changed constant, prototype or
// struct is reported; missing headers are one line. Its run on the real headers is left to a
// machine that has them (docs: the GPU checklist of issue 10).
const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'tools', 'check-cuda-abi.sh')
const REAL_CUDA = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include')
const hasCc = spawnSync(process.env.CC ?? 'cc', ['--version']).status === 0

const CUDA_H = `#include <stddef.h>
#define CUDA_VERSION 12080
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_OUT_OF_MEMORY = 2, CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101, CUDA_ERROR_INVALID_CONTEXT = 201, CUDA_ERROR_INVALID_HANDLE = 400, CUDA_ERROR_NOT_FOUND = 500, CUDA_ERROR_NOT_READY = 600, CUDA_ERROR_ILLEGAL_ADDRESS = 700, CUDA_ERROR_LAUNCH_FAILED = 719 } CUresult;
typedef int CUdevice_v1; typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st* CUcontext; typedef struct CUstream_st* CUstream;
typedef struct CUmod_st* CUmodule; typedef struct CUfunc_st* CUfunction; typedef struct CUevent_st* CUevent;
typedef unsigned long long CUdeviceptr_v2; typedef CUdeviceptr_v2 CUdeviceptr;
typedef enum CUdevice_attribute_enum { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97 } CUdevice_attribute;
typedef enum CUfunction_attribute_enum { CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8 } CUfunction_attribute;
typedef enum CUevent_flags_enum { CU_EVENT_DEFAULT = 0, CU_EVENT_DISABLE_TIMING = 2 } CUevent_flags;
typedef enum CUstream_flags_enum { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 } CUstream_flags;
CUresult cuInit(unsigned int Flags);
CUresult cuDriverGetVersion(int *driverVersion);
CUresult cuDeviceGetCount(int *count);
CUresult cuDeviceGet(CUdevice *device, int ordinal);
CUresult cuDeviceGetName(char *name, int len, CUdevice dev);
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);
CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev);
CUresult cuGetErrorName(CUresult error, const char **pStr);
CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev);
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev);
CUresult cuCtxSetCurrent(CUcontext ctx);
CUresult cuMemGetInfo_v2(size_t *free, size_t *total);
CUresult cuGetErrorString(CUresult error, const char **pStr);
CUresult cuCtxSynchronize(void);
CUresult cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize);
CUresult cuMemFree_v2(CUdeviceptr dptr);
CUresult cuMemAllocHost_v2(void **pp, size_t bytesize);
CUresult cuMemFreeHost(void *p);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount);
CUresult cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount);
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream);
CUresult cuMemsetD8_v2(CUdeviceptr dstDevice, unsigned char uc, size_t N);
CUresult cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N);
CUresult cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream);
CUresult cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream);
CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags);
CUresult cuStreamDestroy_v2(CUstream hStream);
CUresult cuStreamSynchronize(CUstream hStream);
CUresult cuStreamQuery(CUstream hStream);
CUresult cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags);
CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags);
CUresult cuEventDestroy_v2(CUevent hEvent);
CUresult cuEventRecord(CUevent hEvent, CUstream hStream);
CUresult cuEventQuery(CUevent hEvent);
CUresult cuEventSynchronize(CUevent hEvent);
CUresult cuModuleLoadData(CUmodule *module, const void *image);
CUresult cuModuleUnload(CUmodule hmod);
CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name);
CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value);
CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);
`
const NVRTC_H = `#include <stddef.h>
typedef enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_INVALID_OPTION = 5, NVRTC_ERROR_COMPILATION = 6 } nvrtcResult;
typedef struct _nvrtcProgram *nvrtcProgram;
nvrtcResult nvrtcVersion(int *major, int *minor);
const char *nvrtcGetErrorString(nvrtcResult result);
nvrtcResult nvrtcCreateProgram(nvrtcProgram *prog, const char *src, const char *name, int numHeaders, const char * const *headers, const char * const *includeNames);
nvrtcResult nvrtcDestroyProgram(nvrtcProgram *prog);
nvrtcResult nvrtcCompileProgram(nvrtcProgram prog, int numOptions, const char * const *options);
nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram prog, size_t *logSizeRet);
nvrtcResult nvrtcGetProgramLog(nvrtcProgram prog, char *log);
nvrtcResult nvrtcGetCUBINSize(nvrtcProgram prog, size_t *cubinSizeRet);
nvrtcResult nvrtcGetCUBIN(nvrtcProgram prog, char *cubin);
nvrtcResult nvrtcGetPTXSize(nvrtcProgram prog, size_t *ptxSizeRet);
nvrtcResult nvrtcGetPTX(nvrtcProgram prog, char *ptx);
`
const CUBLASLT_H = `#include <stddef.h>
#include <stdint.h>
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16BF = 14 } cudaDataType;
typedef enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_16BF = 75, CUBLAS_COMPUTE_32F_FAST_TF32 = 77 } cublasComputeType_t;
typedef enum { CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0, CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1, CUBLASLT_MATMUL_DESC_TRANSA = 3, CUBLASLT_MATMUL_DESC_TRANSB = 4, CUBLASLT_MATMUL_DESC_EPILOGUE = 7, CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8 } cublasLtMatmulDescAttributes_t;
typedef enum { CUBLASLT_EPILOGUE_DEFAULT = 1, CUBLASLT_EPILOGUE_BIAS = 4 } cublasLtEpilogue_t;
typedef enum { CUBLASLT_MATRIX_LAYOUT_ORDER = 1, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6 } cublasLtMatrixLayoutAttribute_t;
typedef enum { CUBLASLT_ORDER_COL = 0 } cublasLtOrder_t;
typedef enum { CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 } cublasLtMatmulPreferenceAttributes_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct { cublasLtMatmulAlgo_t algo; size_t workspaceSize; cublasStatus_t state; float wavesCount; int reserved[4]; } cublasLtMatmulHeuristicResult_t;
size_t cublasLtGetVersion(void);
size_t cublasLtGetCudartVersion(void);
`

/** Writes the three headers, `edit` applied to their text, to a new folder and runs the check on it. */
function check(edit: (h: string) => string = (h) => h) {
  const dir = mkdtempSync(join(tmpdir(), 'span-abi-'))
  writeFileSync(join(dir, 'cuda.h'), edit(CUDA_H))
  writeFileSync(join(dir, 'nvrtc.h'), edit(NVRTC_H))
  writeFileSync(join(dir, 'cublasLt.h'), edit(CUBLASLT_H))
  return spawnSync('sh', [script, `-I${dir}`], {encoding: 'utf8'})
}

describe.skipIf(!hasCc)('tools/check-cuda-abi.sh', () => {
  it('passes on headers that agree: every constant, type size, struct field and prototype', () => {
    const r = check()
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^all match$/m)
    expect(r.stdout).toMatch(/^ok CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75$/m)
    expect(r.stdout).toMatch(/^ok offsetof\(cublasLtMatmulHeuristicResult_t, wavesCount\) = 76$/m)
    expect(r.stdout).toMatch(/^ok prototype cuDeviceTotalMem_v2$/m)
  })

  it('reports a constant that differs', () => {
    const r = check((h) => h.replace('CUBLASLT_MATMUL_DESC_EPILOGUE = 7', 'CUBLASLT_MATMUL_DESC_EPILOGUE = 27'))
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE = 7, header CUBLASLT_MATMUL_DESC_EPILOGUE = 27$/m)
    expect(r.stdout).toMatch(/^1 MISMATCHES$/m)
  })

  it('reports a struct whose layout differs', () => {
    const r = check((h) => h.replace('size_t workspaceSize; cublasStatus_t state;', 'cublasStatus_t state; size_t workspaceSize;'))
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH offsetof\(SPAN_cublasLtMatmulHeuristicResult_t, workspaceSize\)/m)
  })

  it('fails to compile, naming the function, when a prototype differs', () => {
    const r = check((h) =>
      h.replace('CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev);', 'CUresult cuDeviceTotalMem_v2(unsigned int *bytes, CUdevice dev);'),
    )
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('the prototype of cuDeviceTotalMem_v2 differs from the header')
  })

  // The driver half against the real cuda.h where CUDA's toolkit is installed (this machine and
  // CI have CUDA 13's in /usr/local/cuda, without nvrtc.h or cublasLt.h: those two stay written).
  it.skipIf(!existsSync(join(REAL_CUDA, 'cuda.h')))('passes against the real cuda.h of the CUDA toolkit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-abi-'))
    writeFileSync(join(dir, 'nvrtc.h'), NVRTC_H)
    writeFileSync(join(dir, 'cublasLt.h'), CUBLASLT_H)
    const r = spawnSync('sh', [script, `-I${dir}`, `-I${REAL_CUDA}`], {encoding: 'utf8'})
    expect(r.status, r.stderr + r.stdout).toBe(0)
    expect(r.stdout).toMatch(/^ok prototype cuLaunchKernel$/m)
    expect(r.stdout).toMatch(/^ok CUDA_ERROR_LAUNCH_FAILED = 719$/m)
  })

  it('without headers: one line saying so, exit 2', () => {
    const r = spawnSync('sh', [script, '-I/nonexistent'], {encoding: 'utf8'})
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toMatch(/^check-cuda-abi: CUDA headers not found \(cuda\.h: No such file\)/)
  })
})
