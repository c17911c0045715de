import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {type SearchEnv, type SearchFs, WHEEL_DIRS, allCandidates, candidates, searchDirs, sitePackages} from '../../../../src/core/engine/cuda/libs.js'

// The library search of the cuda backend (src/core/engine/cuda/libs.ts) over a fake file system.

/** A file system of the given files (folders implied by their paths). */
function fakeFs(files: string[]): SearchFs {
  const dirs = new Map<string, Set<string>>()
  for (const f of files) {
    const parts = f.split('/')
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/') || '/'
      if (!dirs.has(dir)) dirs.set(dir, new Set())
      dirs.get(dir)!.add(parts[i])
    }
  }
  return {isDir: (p) => dirs.has(p), list: (p) => [...(dirs.get(p) ?? [])]}
}

const env = (vars: Record<string, string>, files: string[]): SearchEnv => ({env: vars, home: '/home/u', fs: fakeFs(files)})

describe('cuda library search', () => {
  it('orders SPAN_CUDA_LIBS, wheel folders, CUDA_HOME, CUDA_PATH, then the system loader', () => {
    const s = env({SPAN_CUDA_LIBS: '/opt/mine::/opt/second', CUDA_HOME: '/usr/local/cuda', CUDA_PATH: '/opt/cuda', VIRTUAL_ENV: '/venv'}, [
      '/opt/second/libcublasLt.so.12',
      '/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublasLt.so.12',
      '/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcublasLt.so.13',
      '/usr/local/cuda/lib64/libcublasLt.so.12.8.4',
      '/usr/local/cuda/lib64/libcublasLt.so.12',
      '/usr/local/cuda/lib64/libcublasLt.so',
      '/usr/local/cuda/lib64/libcublas.so.12',
      '/opt/cuda/targets/x86_64-linux/lib/libcublasLt.so.12',
    ])
    expect(candidates('cublasLt', s)).toEqual([
      '/opt/second/libcublasLt.so.12',
      '/venv/lib/python3.11/site-packages/nvidia/cu13/lib/libcublasLt.so.13',
      '/venv/lib/python3.11/site-packages/nvidia/cublas/lib/libcublasLt.so.12',
      '/usr/local/cuda/lib64/libcublasLt.so.12.8.4',
      '/usr/local/cuda/lib64/libcublasLt.so.12',
      '/usr/local/cuda/lib64/libcublasLt.so',
      '/opt/cuda/targets/x86_64-linux/lib/libcublasLt.so.12',
      'libcublasLt.so.13',
      'libcublasLt.so.12',
      'libcublasLt.so',
    ])
  })

  it('finds NVRTC and its builtins in the cuda_nvrtc wheel of any site-packages, builtins kept apart from nvrtc', () => {
    const sp = '/home/u/.local/lib/python3.12/site-packages'
    const s = env({}, [
      `${sp}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12`,
      `${sp}/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8`,
      '/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12',
    ])
    expect(sitePackages(s)).toEqual([sp, '/usr/lib/python3/dist-packages'])
    const all = allCandidates(s)
    expect(all.nvrtc.slice(0, 2)).toEqual([`${sp}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12`, '/usr/lib/python3/dist-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12'])
    expect(all.nvrtcBuiltins[0]).toBe(`${sp}/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8`)
    expect(all.nvrtc.some((p) => p.includes('builtins'))).toBe(false)
  })

  it('takes PYTHONPATH, conda and /usr/local site-packages, newest Python first', () => {
    const files = ['/pp/x', '/conda/lib/python3.10/site-packages/x', '/conda/lib/python3.12/site-packages/x', '/usr/local/lib/python3.11/dist-packages/x']
    expect(sitePackages(env({PYTHONPATH: '/pp:/missing', CONDA_PREFIX: '/conda'}, files))).toEqual([
      '/pp',
      '/conda/lib/python3.12/site-packages',
      '/conda/lib/python3.10/site-packages',
      '/usr/local/lib/python3.11/dist-packages',
    ])
  })

  it('never takes the driver from a toolkit or a wheel (their libcuda is a stub): SPAN_CUDA_LIBS, then the loader', () => {
    const s = env({CUDA_HOME: '/usr/local/cuda', SPAN_CUDA_LIBS: '/drv'}, [
      '/usr/local/cuda/lib64/libcuda.so.1',
      '/usr/local/cuda/lib64/stubs/libcuda.so',
      '/drv/libcuda.so.1',
    ])
    expect(searchDirs('cuda', s)).toEqual(['/drv'])
    expect(candidates('cuda', s)).toEqual(['/drv/libcuda.so.1', 'libcuda.so.1'])
    expect(candidates('cuda', env({}, []))).toEqual(['libcuda.so.1'])
  })

  it('with nothing installed, asks the system loader for each soname, newest CUDA first', () => {
    const all = allCandidates(env({}, []))
    expect(all.nvrtc).toEqual(['libnvrtc.so.13', 'libnvrtc.so.12', 'libnvrtc.so'])
    expect(all.nvrtcBuiltins).toEqual(['libnvrtc-builtins.so.13', 'libnvrtc-builtins.so.12', 'libnvrtc-builtins.so'])
    expect(WHEEL_DIRS.map((w) => join('/', w))).toContain('/nvidia/cu13/lib')
  })
})
