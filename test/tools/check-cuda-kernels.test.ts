import {spawnSync} from 'node:child_process'
import {cpSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {HAS_CXX, NVCC, NVRTC} from '../helpers/cuda-toolchain.js'

// tools/check-cuda-kernels.sh: every kernel source of native/cuda/kernels/ compiles to CUBIN for
// sm_80 and sm_90 with a real NVRTC (Debian's 11.8, from tools/ci-cuda-deps.sh), opened by
// dlopen through span's own loader code, and with CUDA 13's nvcc -cubin where it is. A compile
// error fails the check (shown with a kernel that uses INFINITY, which NVRTC does not define).
const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'tools', 'check-cuda-kernels.sh')
const kernelDir = join(root, 'native', 'cuda', 'kernels')
const kernels = readdirSync(kernelDir).filter((f) => f.endsWith('.cu'))
const why = !HAS_CXX ? 'no C++ compiler' : !NVRTC ? 'Debian NVRTC 11.8 absent (tools/ci-cuda-deps.sh installs it)' : null
const nvrtcArgs = NVRTC ? ['--nvrtc', NVRTC.nvrtc, '--builtins', NVRTC.builtins] : []
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync('sh', [script, ...nvrtcArgs, ...args], {encoding: 'utf8', env: {...process.env, ...env}})

describe.skipIf(why !== null)(`tools/check-cuda-kernels.sh with a real NVRTC${why ? ` (skipped: ${why})` : ''}`, () => {
  let all: ReturnType<typeof run>
  beforeAll(() => {
    all = run([])
  })

  it('native/cuda/kernels/ has kernels', () => {
    expect(kernels.length).toBeGreaterThan(0)
  })

  it('every kernel compiles to CUBIN for sm_80 and sm_90 with NVRTC 11.8', () => {
    expect(all.status, all.stderr).toBe(0)
    expect(all.stdout).toMatch(/^NVRTC 11080 /m)
    for (const k of kernels) for (const arch of ['sm_80', 'sm_90']) expect(all.stdout).toMatch(new RegExp(`^ok \\S*/${k} ${arch} \\d+ bytes$`, 'm'))
  })

  it('passes NVRTC the CUDA headers the tensor-core kernels include (<mma.h>: the 11.8 ones of ci-cuda-deps.sh for NVRTC 11.8)', () => {
    expect(all.stdout).toMatch(/^CUDA headers \S+$/m)
    expect(all.stdout).toMatch(/^ok \S*\/flash_attention_wmma\.cu sm_90 \d+ bytes$/m)
  })

  it.skipIf(!NVCC)('and with nvcc -cubin (CUDA 13)', () => {
    for (const k of kernels) for (const arch of ['sm_80', 'sm_90']) expect(all.stdout).toMatch(new RegExp(`^ok nvcc \\S*/${k} ${arch} \\d+ bytes$`, 'm'))
  })

  it.skipIf(!NVCC)('SPAN_NVCC_CACHE: the same inputs give the same lines without nvcc again; another kernel text compiles; a failure is not kept', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-nvcc-cache-'))
    const cache = join(dir, 'cache')
    cpSync(kernelDir, join(dir, 'k'), {recursive: true})
    const k = join(dir, 'k', 'copy.cu')
    const once = (file: string) => run(['--arch', 'sm_80', file], {SPAN_NVCC_CACHE: cache})
    const nvccLines = (s: string) => s.split('\n').filter((l) => l.startsWith('ok nvcc '))
    const first = once(k)
    expect(first.status, first.stderr).toBe(0)
    expect(first.stdout).toContain(`nvcc: 0 of 1 from the cache ${cache}`)
    const again = once(k)
    expect(again.stdout).toContain(`nvcc: 1 of 1 from the cache ${cache}`)
    expect(nvccLines(again.stdout)).toEqual(nvccLines(first.stdout))
    expect(nvccLines(again.stdout)).toEqual([expect.stringMatching(/^ok nvcc \S*\/copy\.cu sm_80 \d+ bytes$/)])
    writeFileSync(k, readFileSync(k, 'utf8') + '\n// another text\n')
    expect(once(k).stdout).toContain('nvcc: 0 of 1 from the cache') // compiled again
    writeFileSync(k, readFileSync(k, 'utf8').replace(/\{/, '{ int broken = ;'))
    for (let i = 0; i < 2; i++) {
      const bad = once(k)
      expect(bad.status).toBe(1)
      expect(bad.stderr).toMatch(/copy\.cu: nvcc -cubin -arch=sm_80 failed/)
    }
  })

  it('a compile error fails the check with the compiler log (INFINITY is not defined under NVRTC)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-kernel-'))
    const bad = join(dir, 'bad.cu')
    writeFileSync(bad, 'extern "C" __global__ void k(float* y) { y[threadIdx.x] = INFINITY; }\n')
    const r = run(['--arch', 'sm_80', bad], {NVCC: '/nonexistent'})
    expect(r.status).toBe(1)
    expect(r.stderr).toContain('NVRTC_ERROR_COMPILATION')
    expect(r.stderr).toMatch(/identifier "INFINITY" is undefined/)
  })
})

describe.skipIf(!HAS_CXX)('tools/check-cuda-kernels.sh without NVRTC', () => {
  it('one line saying why, exit 2', () => {
    const r = spawnSync('sh', [script, '--nvrtc', '/nonexistent/libnvrtc.so.13', '--builtins', '/nonexistent/libnvrtc-builtins.so.13'], {encoding: 'utf8'})
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toMatch(/^nvrtc-compile: \/nonexistent\/libnvrtc-builtins\.so\.13: cannot open shared object file/)
  })
})
