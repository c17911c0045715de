import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {probeCuda} from '../../../../src/core/engine/cuda/addon.js'
import {realFs} from '../../../../src/core/engine/cuda/libs.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'
import {buildFakeCuda} from './fake-cuda.js'

// The real cuda addon (native/cuda/src/loader.cc) on the test-only stand-ins of libcuda and
// libnvrtc (npm run standins; native/cuda/standin): found through SPAN_CUDA_LIBS and nothing else,
// they report the stand-in GPU to the probe and to `span doctor`. Until the cuBLASLt stand-in is
// in the same folder, fake-cuda.ts's libcublasLt (a version number only) completes the set.
const s = buildStandins()
const fake = buildFakeCuda()
const why = 'error' in s ? s.error : 'error' in fake ? fake.error : ''
const skip = why ? ` (skipped: ${why})` : ''
const NAME = 'Span Stand-in GPU (CUDA-C emulator, sm_80)'

describe.skipIf(skip !== '')(`the cuda loader on the stand-ins${skip}`, () => {
  const dir = 'dir' in s ? s.dir : ''
  const libs = `${dir}:${'dir' in fake ? fake.dir : ''}`

  it('probe: the stand-in GPU, its memory through the primary context, the driver and NVRTC versions and paths', () => {
    const p = probeCuda(0, {env: {SPAN_CUDA_LIBS: libs}, home: '/nonexistent', fs: realFs})
    if (typeof p === 'string') throw new Error(p)
    expect(p).toMatchObject({error: '', name: NAME, ccMajor: 8, ccMinor: 0, smCount: 108, driverVersion: 13000, nvrtcVersion: 13000, deviceCount: 1})
    expect(p.totalMem).toBe(16 * 2 ** 30)
    expect(p.freeMem).toBe(p.totalMem)
    expect(p.cuda.path).toBe(join(dir, 'libcuda.so.1'))
    expect(p.nvrtc.path).toBe(join(dir, 'libnvrtc.so.13'))
  })

  it('more devices with SPAN_STANDIN_DEVICES (for --device N); an ordinal past them is the driver error', () => {
    process.env.SPAN_STANDIN_DEVICES = '2' // read by the stand-in loaded in this process
    try {
      const env = {env: {SPAN_CUDA_LIBS: libs}, home: '/nonexistent', fs: realFs}
      expect(probeCuda(1, env)).toMatchObject({error: '', deviceCount: 2, name: NAME})
      expect(probeCuda(2, env)).toMatchObject({error: 'device 2: CUDA_ERROR_INVALID_DEVICE (2 found)'})
    } finally {
      delete process.env.SPAN_STANDIN_DEVICES
    }
  })

  it('never found by the normal library search: without SPAN_CUDA_LIBS the probe does not open them', () => {
    const p = probeCuda(0, {env: {}, home: '/nonexistent', fs: realFs})
    if (typeof p !== 'string') expect(p.cuda.path).not.toContain(dir)
  })

  it('span doctor (bin/run.js) reports the stand-in GPU, started and self-checked, and auto picks it only through SPAN_CUDA_LIBS', () => {
    const r = runSpan(['doctor'], {env: {...process.env, SPAN_CUDA_LIBS: libs}})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(
      new RegExp(
        `^cuda +ok +${NAME.replace(/[()]/g, '\\$&')}, 16\\.0 GiB \\(16\\.0 free\\), compute capability 8\\.0, 108 SMs; driver 13\\.0 \\(${dir}/libcuda\\.so\\.1\\), NVRTC 13\\.0`,
        'm',
      ),
    )
    expect(r.stdout).toMatch(/^auto picks: cuda$/m)
  })
})
