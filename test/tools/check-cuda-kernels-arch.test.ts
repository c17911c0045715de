import {spawnSync} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {HAS_CXX, NVRTC, NVRTC13} from '../helpers/cuda-toolchain.js'

// Issue 35: every kernel of native/cuda/kernels/ compiles for the pre-Ampere GPUs fp16 is for: sm_75
// (T4) with NVRTC 13, sm_70 (V100) with an NVRTC that still targets it (Debian's 11.8, from
// tools/ci-cuda-deps.sh; CUDA 13 dropped sm_70). flash_attention_wmma.cu's bf16 and tf32 modules are
// skipped there (their tensor-core types need sm_80) and its fp16 module (SPAN_FA_F16) compiles.
const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'tools', 'check-cuda-kernels.sh')
const kernels = readdirSync(join(root, 'native', 'cuda', 'kernels')).filter((f) => f.endsWith('.cu'))

function check(lib: {nvrtc: string; builtins: string}, arch: string): {status: number | null; stdout: string; stderr: string} {
  return spawnSync('sh', [script, '--arch', arch, '--nvrtc', lib.nvrtc, '--builtins', lib.builtins], {
    encoding: 'utf8',
    env: {...process.env, NVCC: '/nonexistent'},
  })
}

function everyKernel(stdout: string, arch: string): void {
  for (const k of kernels.filter((f) => f !== 'flash_attention_wmma.cu')) expect(stdout).toMatch(new RegExp(`^ok \\S*/${k} ${arch} \\d+ bytes$`, 'm'))
  expect(stdout).toMatch(new RegExp(`^ok \\S*/flash_attention_wmma\\.cu\\[SPAN_FA_F16\\] ${arch} \\d+ bytes$`, 'm'))
  expect(stdout).toMatch(new RegExp(`^skip \\S*/flash_attention_wmma\\.cu ${arch} \\(sm_80 and later\\)$`, 'm'))
  expect(stdout).toMatch(new RegExp(`^skip \\S*/flash_attention_wmma\\.cu\\[SPAN_FA_TF32\\] ${arch} \\(sm_80 and later\\)$`, 'm'))
}

describe.skipIf(!HAS_CXX || !NVRTC13)(
  `every kernel for sm_75 with NVRTC 13${NVRTC13 ? '' : ' (skipped: no NVRTC 13: pip install nvidia-cuda-nvrtc in a venv, SPAN_NVRTC13_DIR)'}`,
  () => {
    it('compiles', () => {
      const r = check(NVRTC13!, 'sm_75')
      expect(r.status, r.stderr).toBe(0)
      expect(r.stdout).toMatch(/^NVRTC 130\d\d /m)
      everyKernel(r.stdout, 'sm_75')
    }, 600_000)
  },
)

describe.skipIf(!HAS_CXX || !NVRTC)(`every kernel for sm_70 with NVRTC 11.8${NVRTC ? '' : ' (skipped: tools/ci-cuda-deps.sh installs it)'}`, () => {
  it('compiles', () => {
    const r = check(NVRTC!, 'sm_70')
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^NVRTC 11080 /m)
    everyKernel(r.stdout, 'sm_70')
  }, 600_000)
})
