import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/**
 * Stand-ins for the CUDA libraries, compiled at test time with the system C compiler: a
 * libcuda.so.1 that reports one "Fake GPU" (80 GiB, 60 free, compute capability 9.0, 132 SMs,
 * driver 12.8), a libnvrtc.so.12 of version 12.8, a libcublasLt.so.12 of version 12.8.4 and an
 * empty libnvrtc-builtins.so.12.8. They let the cuda loader's device query run on a machine with
 * no GPU. Exported symbols carry the names and signatures of native/cuda/src/abi.h.
 */
const CUDA = `
#include <string.h>
#include <stddef.h>
int cuInit(unsigned f) { return FAIL_INIT; }
int cuDriverGetVersion(int* v) { *v = 12080; return 0; }
int cuDeviceGetCount(int* n) { *n = 1; return 0; }
int cuDeviceGet(int* d, int o) { if (o != 0) return 101; *d = 0; return 0; }
int cuDeviceGetName(char* s, int n, int d) { strncpy(s, "Fake GPU", n); return 0; }
int cuDeviceTotalMem_v2(size_t* b, int d) { *b = (size_t)80 << 30; return 0; }
int cuDeviceGetAttribute(int* v, int a, int d) { *v = a == 75 ? 9 : a == 76 ? 0 : a == 16 ? 132 : -1; return 0; }
int cuGetErrorName(int e, const char** s) { *s = e == 101 ? "CUDA_ERROR_INVALID_DEVICE" : e == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN"; return 0; }
static int ctx;
int cuDevicePrimaryCtxRetain(void** c, int d) { *c = &ctx; return 0; }
int cuDevicePrimaryCtxRelease_v2(int d) { return 0; }
int cuCtxSetCurrent(void* c) { return 0; }
int cuMemGetInfo_v2(size_t* f, size_t* t) { *f = (size_t)60 << 30; *t = (size_t)80 << 30; return 0; }
`
const NVRTC = 'int nvrtcVersion(int* a, int* b) { *a = 12; *b = 8; return 0; }\n'
const LT = '#include <stddef.h>\nsize_t cublasLtGetVersion(void) { return 120804; }\n'

/** Builds the fakes into a new folder; null (with why) when no C compiler works. failInit: cuInit returns CUDA_ERROR_NO_DEVICE. */
export function buildFakeCuda(failInit = false): {dir: string} | {error: string} {
  const dir = mkdtempSync(join(tmpdir(), 'span-fake-cuda-'))
  const libs: [string, string][] = [
    ['libcuda.so.1', CUDA.replace('FAIL_INIT', failInit ? '100' : '0')],
    ['libnvrtc.so.12', NVRTC],
    ['libcublasLt.so.12', LT],
    ['libnvrtc-builtins.so.12.8', 'int span_fake_builtins;\n'],
  ]
  for (const [name, src] of libs) {
    const c = join(dir, `${name}.c`)
    writeFileSync(c, src)
    const r = spawnSync(process.env.CC ?? 'cc', ['-shared', '-fPIC', '-o', join(dir, name), c], {encoding: 'utf8'})
    if (r.status !== 0) return {error: `no working C compiler (${(r.error?.message ?? r.stderr).split('\n')[0]})`}
  }
  return {dir}
}
