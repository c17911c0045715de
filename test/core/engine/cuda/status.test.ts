import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cudaIncludeDir} from '../../../../src/core/engine/cuda/cuda-include.js'
import {cudaStatus} from '../../../../src/core/engine/cuda/status.js'
import {realFs} from '../../../../src/core/engine/cuda/libs.js'
import {buildFakeCuda} from './fake-cuda.js'

// The cuda backend's probe (native/cuda, src/core/engine/cuda/status.ts) and what doctor and
// --backend cuda say: on this machine's real libraries, and on stand-ins for the NVIDIA
// driver, NVRTC and cuBLASLt compiled here (fake-cuda.ts), so the device query runs without a GPU.
const root = join(import.meta.dirname, '..', '..', '..', '..')
const span = (args: string[], env: Record<string, string> = {}, input?: string) =>
  spawnSync('node', [join(root, 'bin', 'run.js'), ...args], {cwd: root, env: {...process.env, ...env}, input, encoding: 'utf8'})
const fake = buildFakeCuda()
const noCc = 'error' in fake ? ` (skipped: ${fake.error})` : ''

describe('cuda status', () => {
  it('without a driver: unavailable, one line saying so', () => {
    const s = cudaStatus(0, {env: {SPAN_CUDA_LIBS: '/nonexistent'}, home: '/nonexistent', fs: realFs})
    expect(s.available).toBe(false)
    if (s.probe?.cuda.path) return // this machine has a driver: covered by the GPU tests
    expect(s.detail).toMatch(/^no NVIDIA driver \(libcuda\.so\.1: .+\)$/)
    expect(s.detail).not.toContain('\n')
  })

  it('a missing or stale loader addon is one line too', () => {
    const r = span(['doctor', '--json'], {SPAN_CUDA_ADDON: join(root, 'no-such-cuda.node')})
    expect(r.status, r.stderr).toBe(0)
    const cuda = JSON.parse(r.stdout.split('\n')[0])
    expect(cuda).toMatchObject({backend: 'cuda', available: false})
    expect(cuda.detail).toMatch(/^the cuda loader is not built \(.*no-such-cuda\.node missing/)
  })

  it.skipIf(noCc !== '')(`on stand-in libraries: the GPU, memory, CC, driver and library versions and paths${noCc}`, () => {
    const dir = (fake as {dir: string}).dir
    const s = cudaStatus(0, {env: {SPAN_CUDA_LIBS: dir}, home: '/nonexistent', fs: realFs})
    expect(s.probe).toMatchObject({name: 'Fake GPU', ccMajor: 9, ccMinor: 0, smCount: 132, driverVersion: 12080, nvrtcVersion: 12080, cublasLtVersion: 120804})
    expect(s.probe!.nvrtcBuiltins.path).toBe(join(dir, 'libnvrtc-builtins.so.12.8'))
    expect(s.available).toBe(true)
    expect(s.detail).toBe(
      `Fake GPU, 80.0 GiB (60.0 free), compute capability 9.0, 132 SMs; ` +
        `driver 12.8 (${dir}/libcuda.so.1), NVRTC 12.8 (${dir}/libnvrtc.so.12), cuBLASLt 12.8.4 (${dir}/libcublasLt.so.12); ` +
        (cudaIncludeDir(join(dir, 'libnvrtc.so.12'))
          ? `CUDA headers ${cudaIncludeDir(join(dir, 'libnvrtc.so.12'))}`
          : 'no CUDA headers (mma.h: set SPAN_CUDA_INCLUDE; bf16 and fp16 attention run on fp32 FMA kernels)') +
        '; default precision bf16 (compute capability 9.0: bf16 tensor cores)',
    )
    expect(cudaStatus(3, {env: {SPAN_CUDA_LIBS: dir}, home: '/nonexistent', fs: realFs}).detail).toBe('device 3: CUDA_ERROR_INVALID_DEVICE (1 found)')
  })

  // The fake driver answers the device query only: opening the backend's context fails, in one line.
  it.skipIf(noCc !== '')(`doctor prints the cuda line; auto does not pick cuda; --backend cuda fails in one line${noCc}`, () => {
    const env = {SPAN_CUDA_LIBS: (fake as {dir: string}).dir}
    const r = span(['doctor'], env)
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^cuda +missing +libcuda lacks cuGetErrorString$/m)
    expect(r.stdout).not.toMatch(/^auto picks: cuda$/m)
    const masked = ['tokenize', 'block', 'mask'].reduce(
      (input, cmd) => span(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {}, input).stdout,
      'the union is strong\n',
    )
    const p = span(
      ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--max-steps', '1', '--backend', 'cuda', '--out', join(dir0(), 'm')],
      env,
      masked,
    )
    expect(p.status).not.toBe(0)
    const lines = p.stderr
      .trim()
      .split('\n')
      .filter((l) => l.startsWith('span pretrain:'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe('span pretrain: --backend cuda is not available: libcuda lacks cuGetErrorString')
    const failing = buildFakeCuda(true) as {dir: string}
    expect(span(['doctor', '--json'], {SPAN_CUDA_LIBS: failing.dir}).stdout.split('\n')[0]).toContain('"detail":"cuInit failed: CUDA_ERROR_NO_DEVICE"')
  })
})

function dir0(): string {
  return (fake as {dir: string}).dir
}
