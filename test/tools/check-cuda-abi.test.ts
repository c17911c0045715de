import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
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
const hasCc = spawnSync(process.env.CC ?? 'cc', ['--version']).status === 0

const CUDA_H = `#include <stddef.h>
#define CUDA_VERSION 12080
typedef enum cudaError_enum { CUDA_SUCCESS = 0, CUDA_ERROR_NOT_INITIALIZED = 3, CUDA_ERROR_INSUFFICIENT_DRIVER = 35, CUDA_ERROR_NO_DEVICE = 100, CUDA_ERROR_INVALID_DEVICE = 101 } CUresult;
typedef int CUdevice_v1; typedef CUdevice_v1 CUdevice;
typedef struct CUctx_st* CUcontext; typedef struct CUstream_st* CUstream;
typedef unsigned long long CUdeviceptr_v2; typedef CUdeviceptr_v2 CUdeviceptr;
typedef enum CUdevice_attribute_enum { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76 } CUdevice_attribute;
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
`
const NVRTC_H = `typedef enum { NVRTC_SUCCESS = 0 } nvrtcResult;
nvrtcResult nvrtcVersion(int *major, int *minor);
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

  it('without headers: one line saying so, exit 2', () => {
    const r = spawnSync('sh', [script, '-I/nonexistent'], {encoding: 'utf8'})
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toMatch(/^check-cuda-abi: CUDA headers not found \(cuda\.h: No such file\)/)
  })
})
