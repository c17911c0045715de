import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {CUDA13_INCLUDE, CUDA118_INCLUDE, HAS_CC} from '../helpers/cuda-toolchain.js'

// tools/check-cuda-abi.sh, the check of native/cuda/src/abi.h against the REAL CUDA headers:
// CUDA 13's cuda.h in /usr/local/cuda (NVIDIA's wheels: no nvrtc.h or cublasLt.h) and Debian's
// CUDA 11.8 cuda.h + nvrtc.h + cublasLt.h (tools/ci-cuda-deps.sh). Each suite skips, saying
// why, where its headers are absent. That the check can fail is shown on the same real headers
// with a wrong copy of abi.h (SPAN_ABI_H): the constant that no cuda.h has
// (CUDA_ERROR_INSUFFICIENT_DRIVER, the runtime API's cudaErrorInsufficientDriver, which a
// stand-in header once let pass), a changed value, prototype and struct.
const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'tools', 'check-cuda-abi.sh')
const abi = readFileSync(join(root, 'native', 'cuda', 'src', 'abi.h'), 'utf8')

function run(args: string[], abiText?: string) {
  const env = {...process.env}
  if (abiText !== undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'span-abi-'))
    env.SPAN_ABI_H = join(dir, 'abi.h')
    writeFileSync(env.SPAN_ABI_H, abiText)
  }
  return spawnSync('sh', [script, ...args], {encoding: 'utf8', env})
}

/** abi.h with `from` replaced by `to`, failing the test if `from` is not there. */
function edited(from: string, to: string): string {
  expect(abi).toContain(from)
  return abi.replace(from, to)
}

const skip13 = !HAS_CC ? 'no C compiler' : !CUDA13_INCLUDE ? 'CUDA 13 headers absent (/usr/local/cuda/include/cuda.h)' : null
const skip118 = !HAS_CC ? 'no C compiler' : !CUDA118_INCLUDE ? 'CUDA 11.8 headers absent (tools/ci-cuda-deps.sh extracts them)' : null

describe('tools/check-cuda-abi.sh on CUDA 13 cuda.h', () => {
  it.skipIf(skip13 !== null)(`the driver section matches; nvrtc.h and cublasLt.h are named as not checked${skip13 ? ` (skipped: ${skip13})` : ''}`, () => {
    const r = run([`-I${CUDA13_INCLUDE}`])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^CUDA_VERSION \d{5}$/m)
    expect(r.stdout).toMatch(/^ok CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75$/m)
    expect(r.stdout).toMatch(/^ok prototype cuDeviceTotalMem_v2$/m)
    expect(r.stdout).toMatch(/^not checked: nvrtc\.h not found \(\d+ declarations\)$/m)
    expect(r.stdout).toMatch(/^not checked: cublasLt\.h not found \(\d+ declarations\)$/m)
    expect(r.stdout).toMatch(/^all match$/m)
  })

  it.skipIf(skip13 !== null)('the constant no cuda.h has (CUDA_ERROR_INSUFFICIENT_DRIVER = 35) fails the check', () => {
    const r = run(
      [`-I${CUDA13_INCLUDE}`],
      edited('#define SPAN_CUDA_ERROR_NO_DEVICE 100', '#define SPAN_CUDA_ERROR_INSUFFICIENT_DRIVER 35\n#define SPAN_CUDA_ERROR_NO_DEVICE 100'),
    )
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('does not match the headers')
    expect(r.stderr).toMatch(/'CUDA_ERROR_INSUFFICIENT_DRIVER' undeclared|CUDA_ERROR_INSUFFICIENT_DRIVER.*undeclared/)
  })

  it.skipIf(skip13 !== null)('--all refuses when nvrtc.h or cublasLt.h is missing (exit 2, one line)', () => {
    const r = run(['--all', `-I${CUDA13_INCLUDE}`])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toBe('check-cuda-abi: CUDA headers not found (nvrtc.h, cublasLt.h: No such file); pass their folders as -I... or set CUDA_HOME')
  })
})

describe('tools/check-cuda-abi.sh on CUDA 11.8 cuda.h, nvrtc.h, cublasLt.h', () => {
  const inc = `-I${CUDA118_INCLUDE}`
  it.skipIf(skip118 !== null)(`every section matches: constants, type sizes, struct layouts, prototypes${skip118 ? ` (skipped: ${skip118})` : ''}`, () => {
    const r = run(['--all', inc])
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^CUDA_VERSION 11080$/m)
    expect(r.stdout).not.toMatch(/not checked/)
    for (const name of ['cublasLtMatmul', 'cublasLtMatmulAlgoGetHeuristic', 'cublasLtMatrixLayoutCreate', 'nvrtcCompileProgram', 'nvrtcGetCUBIN', 'cuInit'])
      expect(r.stdout).toMatch(new RegExp(`^ok prototype ${name}$`, 'm'))
    expect(r.stdout).toMatch(/^ok CUBLASLT_EPILOGUE_GELU_AUX_BIAS = 164$/m)
    expect(r.stdout).toMatch(/^ok offsetof\(cublasLtMatmulHeuristicResult_t, wavesCount\) = 76$/m)
    expect(r.stdout).toMatch(/^all match$/m)
  })

  it.skipIf(skip118 !== null)('reports a constant that differs', () => {
    const r = run([inc], edited('#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE 7', '#define SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE 27'))
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH SPAN_CUBLASLT_MATMUL_DESC_EPILOGUE = 27, header CUBLASLT_MATMUL_DESC_EPILOGUE = 7$/m)
    expect(r.stdout).toMatch(/^1 MISMATCHES$/m)
  })

  it.skipIf(skip118 !== null)('reports a struct whose layout differs', () => {
    const r = run([inc], edited('  size_t workspaceSize;\n  int state;', '  int state;\n  size_t workspaceSize;'))
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH offsetof\(SPAN_cublasLtMatmulHeuristicResult_own, workspaceSize\)/m)
  })

  it.skipIf(skip118 !== null)('fails to compile, naming the function, when a prototype differs', () => {
    const r = run([inc], edited('SPAN_cudaDataType_t type, uint64_t rows,', 'SPAN_cudaDataType_t type, uint32_t rows,'))
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('the prototype of cublasLtMatrixLayoutCreate differs from the header')
  })
})

describe.skipIf(!HAS_CC)('tools/check-cuda-abi.sh without headers', () => {
  it('one line saying so, exit 2', () => {
    const r = run(['-I/nonexistent'])
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toMatch(/^check-cuda-abi: CUDA headers not found \(cuda\.h, nvrtc\.h, cublasLt\.h: No such file\)/)
  })
})
