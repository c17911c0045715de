// span's CUDA declarations and kernels against CUDA 13's own toolchain, without a GPU (issue 34):
// cuda.h 13 from the image (/usr/local/cuda/include), nvrtc.h, cublasLt.h, libnvrtc.so.13,
// libcublasLt.so.13 from NVIDIA's wheels (nvidia-cuda-nvrtc, nvidia-cublas) and nccl.h, libnccl.so.2
// from nvidia-nccl-cu13, in the venv of tools/interop-env.sh (skipped, saying why, without it).
//  - tools/check-cuda-abi.sh --all: every constant, size, struct layout and prototype of abi.h
//    against CUDA 13's three headers; tools/check-nccl-abi.sh against NCCL 2.30's nccl.h;
//  - tools/check-cuda-kernels.sh: every kernel compiled to CUBIN for sm_80, sm_90 and sm_100 by
//    the wheel's NVRTC 13, opened by dlopen through the addon's own loader code (CUDA 11.8's
//    NVRTC, the oldest span supports, is test/tools/check-cuda-kernels.test.ts's);
//  - tools/check-cuda-symbols.sh: every entry point the addon resolves by dlsym in libcublasLt,
//    libnccl and libnvrtc is defined in the wheels' libraries (nm -D).
// Each check is also shown to fail on a broken copy: a wrong enum value in abi.h and nccl-abi.h,
// a kernel with a syntax error, a renamed entry point.
import {spawnSync} from 'node:child_process'
import {cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, titled, wheelFile} from '../helpers/interop.js'
import {CUDA13_INCLUDE, HAS_CC, HAS_CXX} from '../helpers/cuda-toolchain.js'

const root = join(import.meta.dirname, '..', '..')
const tool = (name: string) => join(root, 'tools', name)
const tmp = mkdtempSync(join(tmpdir(), 'span-cuda13-'))
const kernels = readdirSync(join(root, 'native', 'cuda', 'kernels')).filter((f) => f.endsWith('.cu'))
const ARCHS = ['sm_80', 'sm_90', 'sm_100']

const cu13 = wheelFile('cu13/include/cublasLt.h') && wheelFile('cu13/include/nvrtc.h') ? join(wheelFile('cu13/include/nvrtc.h')!, '..') : null
const ncclInclude = wheelFile('nccl/include/nccl.h') ? join(wheelFile('nccl/include/nccl.h')!, '..') : null
const nvrtc = wheelFile('cu13/lib/libnvrtc.so.13')
const builtins =
  wheelFile('cu13/lib/libnvrtc-builtins.so.13.0') ??
  (nvrtc
    ? (readdirSync(join(nvrtc, '..'))
        .filter((f) => /^libnvrtc-builtins\.so\.13/.test(f))
        .map((f) => join(nvrtc, '..', f))[0] ?? null)
    : null)
const libs = [wheelFile('cu13/lib/libcublasLt.so.13'), wheelFile('nccl/lib/libnccl.so.2'), nvrtc]

const sh = (script: string, args: string[], env: Record<string, string> = {}) =>
  spawnSync('sh', [tool(script), ...args], {encoding: 'utf8', env: {...process.env, ...env}, maxBuffer: 1 << 26})

/** A copy of `file` with `from` replaced by `to` (failing the test when `from` is not there). */
function edited(file: string, from: string, to: string): string {
  const text = readFileSync(file, 'utf8')
  expect(text).toContain(from)
  const out = join(mkdtempSync(join(tmp, 'edit-')), file.split('/').pop()!)
  writeFileSync(out, text.replace(from, to))
  return out
}

const whyAbi = !HAS_CC
  ? 'no C compiler'
  : !CUDA13_INCLUDE
    ? 'CUDA 13 cuda.h absent (/usr/local/cuda/include)'
    : (lacking('nvidia-cuda-nvrtc', 'nvidia-cublas') ?? (cu13 ? null : 'the wheels have no nvrtc.h/cublasLt.h'))
describe.skipIf(whyAbi !== null)(titled('tools/check-cuda-abi.sh --all on CUDA 13 (cuda.h of the image, nvrtc.h and cublasLt.h of the wheels)', whyAbi), () => {
  const incs = ['--all', `-I${CUDA13_INCLUDE}`, `-I${cu13}`]
  it('every constant, size, struct layout and prototype matches', () => {
    const r = sh('check-cuda-abi.sh', incs)
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^CUDA_VERSION 13\d{3}$/m)
    expect(r.stdout).not.toMatch(/not checked|MISMATCH/)
    for (const name of ['cuInit', 'nvrtcCompileProgram', 'nvrtcGetCUBIN', 'cublasLtMatmul', 'cublasLtMatmulAlgoGetHeuristic'])
      expect(r.stdout).toMatch(new RegExp(`^ok prototype ${name}$`, 'm'))
    expect(r.stdout).toMatch(/^ok offsetof\(cublasLtMatmulHeuristicResult_t, wavesCount\) = \d+$/m)
    expect(r.stdout).toMatch(/^all match$/m)
  })

  it('a wrong enum value in abi.h (CUBLASLT_EPILOGUE_GELU 32 → 33) fails it', () => {
    const abi = edited(join(root, 'native', 'cuda', 'src', 'abi.h'), '#define SPAN_CUBLASLT_EPILOGUE_GELU 32', '#define SPAN_CUBLASLT_EPILOGUE_GELU 33')
    const r = sh('check-cuda-abi.sh', incs, {SPAN_ABI_H: abi})
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH SPAN_CUBLASLT_EPILOGUE_GELU = 33, header CUBLASLT_EPILOGUE_GELU = 32$/m)
  })
})

const whyNccl = !HAS_CC
  ? 'no C compiler'
  : !CUDA13_INCLUDE
    ? 'CUDA 13 headers absent'
    : (lacking('nvidia-nccl-cu13') ?? (ncclInclude ? null : 'the wheel has no nccl.h'))
describe.skipIf(whyNccl !== null)(titled("tools/check-nccl-abi.sh on nvidia-nccl-cu13's nccl.h", whyNccl), () => {
  it('every constant, size and prototype of nccl-abi.h matches NCCL 2.30', () => {
    const r = sh('check-nccl-abi.sh', [`-I${ncclInclude}`])
    expect(r.status, r.stdout + r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^NCCL_VERSION_CODE 2\d{4}$/m)
    expect(r.stdout).toMatch(/^ok prototype ncclAllReduce$/m)
    expect(r.stdout).toMatch(/^all match$/m)
  })

  it('a wrong enum value in nccl-abi.h (ncclSystemError 2 → 3) fails it', () => {
    const abi = edited(join(root, 'native', 'cuda', 'src', 'nccl-abi.h'), '#define SPAN_ncclSystemError 2', '#define SPAN_ncclSystemError 3')
    const r = sh('check-nccl-abi.sh', [`-I${ncclInclude}`], {SPAN_NCCL_ABI_H: abi})
    expect(r.status).toBe(1)
    expect(r.stdout).toMatch(/^MISMATCH SPAN_ncclSystemError = 3, header ncclSystemError = 2$/m)
  })
})

const whyNvrtc = !HAS_CXX ? 'no C++ compiler' : (lacking('nvidia-cuda-nvrtc') ?? (nvrtc && builtins ? null : 'the wheel has no libnvrtc.so.13'))
describe.skipIf(whyNvrtc !== null)(titled("tools/check-cuda-kernels.sh with nvidia-cuda-nvrtc's NVRTC 13 (sm_80, sm_90, sm_100)", whyNvrtc), () => {
  const args = ['--nvrtc', nvrtc ?? '', '--builtins', builtins ?? '']
  let all: ReturnType<typeof sh>
  beforeAll(() => {
    all = sh('check-cuda-kernels.sh', [...args, '--arch', ARCHS.join(',')], {NVCC: '/nonexistent'}) // nvcc's own pass: test/tools/check-cuda-kernels.test.ts
  }, 600_000)

  it('every kernel compiles to CUBIN for each architecture', () => {
    expect(all.status, all.stderr).toBe(0)
    expect(all.stdout).toMatch(/^NVRTC 130\d\d /m)
    expect(kernels.length).toBeGreaterThan(0)
    for (const k of kernels) for (const arch of ARCHS) expect(all.stdout).toMatch(new RegExp(`^ok \\S*/${k} ${arch} \\d+ bytes$`, 'm'))
  })

  it("a kernel with a syntax error fails it with NVRTC 13's log", () => {
    const src = join(root, 'native', 'cuda', 'kernels', kernels[0])
    const dir = mkdtempSync(join(tmp, 'kernels-'))
    cpSync(join(root, 'native', 'cuda', 'kernels'), dir, {recursive: true})
    const bad = join(dir, kernels[0])
    writeFileSync(bad, readFileSync(src, 'utf8').replace(/\{/, '{ int broken = ;'))
    const r = sh('check-cuda-kernels.sh', [...args, '--arch', 'sm_90', bad], {NVCC: '/nonexistent'})
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('NVRTC_ERROR_COMPILATION')
    expect(r.stderr).toMatch(/expected an expression/)
  })
})

const whySyms =
  lacking('nvidia-cublas', 'nvidia-nccl-cu13', 'nvidia-cuda-nvrtc') ??
  (libs.every(Boolean) ? null : 'the wheels have no libcublasLt.so.13, libnccl.so.2 or libnvrtc.so.13')
describe.skipIf(whySyms !== null)(
  titled("tools/check-cuda-symbols.sh: what the addon resolves is in the wheels' libcublasLt, libnccl, libnvrtc", whySyms),
  () => {
    it('every entry point is defined (nm -D)', () => {
      const r = sh('check-cuda-symbols.sh', libs as string[])
      expect(r.status, r.stdout + r.stderr).toBe(0)
      expect(r.stdout).not.toMatch(/MISSING/)
      for (const name of ['cublasLtMatmul', 'cublasLtMatmulAlgoGetHeuristic', 'ncclAllReduce', 'ncclCommInitRank', 'nvrtcGetCUBIN'])
        expect(r.stdout).toMatch(new RegExp(`^ok ${name}$`, 'm'))
      expect(r.stdout).toMatch(/^libcublasLt\.so\.13: \d+ entry points checked$/m)
    })

    it("an entry point renamed in the addon's sources (cublasLtMatmul → cublasLtMatmul_v9) is reported missing", () => {
      const src = mkdtempSync(join(tmp, 'src-'))
      cpSync(join(root, 'native', 'cuda', 'src'), src, {recursive: true})
      const gemm = readFileSync(join(src, 'gemm.cc'), 'utf8')
      const renamed = gemm.replace('SPAN_BIND(ltMatmul, "cublasLtMatmul")', 'SPAN_BIND(ltMatmul, "cublasLtMatmul_v9")')
      expect(renamed).not.toBe(gemm) // the plant took: gemm.cc still binds cublasLtMatmul this way
      writeFileSync(join(src, 'gemm.cc'), renamed)
      const r = sh('check-cuda-symbols.sh', [libs[0]!], {SPAN_CUDA_SRC: src})
      expect(r.status).toBe(1)
      expect(r.stdout).toMatch(/^MISSING cublasLtMatmul_v9 in \S+libcublasLt\.so\.13$/m)
    })
  },
)
