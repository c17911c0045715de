import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {cudaIncludeDir} from '../../../../src/core/engine/cuda/cuda-include.js'

// Where NVRTC gets <mma.h> and <cuda_bf16.h> for the tensor-core attention (cuda-include.ts): the
// first folder holding both, in the documented order; a folder with only one of them is passed over.
function folder(files: string[]): string {
  const d = mkdtempSync(join(tmpdir(), 'span-cuda-inc-'))
  for (const f of files) writeFileSync(join(d, f), '')
  return d
}

describe('cudaIncludeDir', () => {
  const both = ['mma.h', 'cuda_bf16.h']
  it('SPAN_CUDA_INCLUDE first, then the stand-in beside NVRTC, CUDA_HOME, CUDA_PATH, the toolkit beside NVRTC', () => {
    const a = folder(both)
    const home = mkdtempSync(join(tmpdir(), 'span-cuda-home-'))
    mkdirSync(join(home, 'include'))
    for (const f of both) writeFileSync(join(home, 'include', f), '')
    const lib = mkdtempSync(join(tmpdir(), 'span-cuda-lib-'))
    mkdirSync(join(lib, 'span-emu', 'include'), {recursive: true})
    for (const f of both) writeFileSync(join(lib, 'span-emu', 'include', f), '')
    const nvrtc = join(lib, 'libnvrtc.so.13')
    expect(cudaIncludeDir(nvrtc, {SPAN_CUDA_INCLUDE: a, CUDA_HOME: home})).toBe(a)
    expect(cudaIncludeDir(nvrtc, {CUDA_HOME: home})).toBe(join(lib, 'span-emu', 'include'))
    const path = join(a, '..', 'path-root')
    mkdirSync(join(path, 'include'), {recursive: true})
    for (const f of both) writeFileSync(join(path, 'include', f), '')
    expect(cudaIncludeDir(undefined, {CUDA_HOME: home, CUDA_PATH: path})).toBe(join(home, 'include'))
    expect(cudaIncludeDir(undefined, {CUDA_PATH: path})).toBe(join(path, 'include'))
    const toolkit = mkdtempSync(join(tmpdir(), 'span-cuda-tk-'))
    mkdirSync(join(toolkit, 'lib'))
    mkdirSync(join(toolkit, 'include'))
    for (const f of both) writeFileSync(join(toolkit, 'include', f), '')
    expect(cudaIncludeDir(join(toolkit, 'lib', 'libnvrtc.so.12'), {})).toBe(join(toolkit, 'lib', '..', 'include'))
  })

  it('passes over a folder with mma.h but no cuda_bf16.h', () => {
    const half = folder(['mma.h'])
    const lib = mkdtempSync(join(tmpdir(), 'span-cuda-lib-'))
    mkdirSync(join(lib, 'span-emu', 'include'), {recursive: true})
    for (const f of ['mma.h', 'cuda_bf16.h']) writeFileSync(join(lib, 'span-emu', 'include', f), '')
    expect(cudaIncludeDir(join(lib, 'libnvrtc.so.13'), {SPAN_CUDA_INCLUDE: half})).toBe(join(lib, 'span-emu', 'include'))
  })
})
