/**
 * Where the real CUDA toolchain pieces that CI checks against without a GPU are (issue 20;
 * tools/ci-cuda-deps.sh installs them): CUDA 13's headers and nvcc in /usr/local/cuda (NVIDIA's
 * wheels), Debian's CUDA 11.8 headers extracted to /opt/span-cuda-11.8/include, and Debian's
 * NVRTC 11.8 (libnvrtc.so.11.2, which opens libnvrtc-builtins.so.11.8 by soname). Each is null
 * when absent, so that the tests that need it skip with that reason.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, readdirSync} from 'node:fs'
import {join} from 'node:path'
import {realSearchEnv, sitePackages} from '../../src/core/engine/cuda/libs.js'

const cudaHome = process.env.CUDA_HOME ?? '/usr/local/cuda'
const at = (p: string): string | null => (existsSync(p) ? p : null)

/** CUDA 13's include folder (cuda.h only: no nvrtc.h, no cublasLt.h). */
export const CUDA13_INCLUDE = at(join(cudaHome, 'include', 'cuda.h')) ? join(cudaHome, 'include') : null

/** Debian's CUDA 11.8 headers (cuda.h, nvrtc.h, cublasLt.h). */
const dir118 = join(process.env.SPAN_CUDA118_DIR ?? '/opt/span-cuda-11.8', 'include')
export const CUDA118_INCLUDE = ['cuda.h', 'nvrtc.h', 'cublasLt.h'].every((h) => existsSync(join(dir118, h))) ? dir118 : null

/** A library by soname in the system loader's cache (ldconfig -p), or null. */
function systemLib(soname: string): string | null {
  const r = spawnSync('/sbin/ldconfig', ['-p'], {encoding: 'utf8'})
  const line = (r.stdout ?? '').split('\n').find((l) => l.trim().startsWith(`${soname} `) && l.includes('x86-64'))
  return line ? (line.split('=>')[1]?.trim() ?? null) : null
}

/** Debian's NVRTC 11.8: the library and its builtins (opened first, as span's loader does). */
export const NVRTC = ((): {nvrtc: string; builtins: string} | null => {
  const nvrtc = systemLib('libnvrtc.so.11.2')
  const builtins = systemLib('libnvrtc-builtins.so.11.8')
  return nvrtc && builtins ? {nvrtc, builtins} : null
})()

export const NVCC = at(join(cudaHome, 'bin', 'nvcc'))

/** The C and C++ compilers the harnesses are built with. */
export const HAS_CC = spawnSync(process.env.CC ?? 'cc', ['--version']).status === 0
export const HAS_CXX = spawnSync(process.env.CXX ?? 'g++', ['--version']).status === 0

/** Why a test needs something absent: the reason to skip with, or null. */
export const absent = (what: string, v: unknown): string | null => (v ? null : `${what} absent (tools/ci-cuda-deps.sh installs it)`)

/**
 * NVRTC 13 (issue 35: the sm_75 check), from NVIDIA's wheel (`pip install nvidia-cuda-nvrtc` into a
 * venv outside the repository; tools/ci-cuda-deps.sh makes $SPAN_NVRTC13_VENV, /opt/span-nvrtc13): the
 * folder in SPAN_NVRTC13_DIR, else the wheel's nvidia/cu13/lib in that venv or under the site-packages
 * span's library search looks in (an active venv, PYTHONPATH, ~/.local), or null.
 */
export const NVRTC13 = ((): {nvrtc: string; builtins: string} | null => {
  const venv = realSearchEnv()
  venv.env = {...venv.env, VIRTUAL_ENV: process.env.SPAN_NVRTC13_VENV ?? '/opt/span-nvrtc13'}
  const sites = [...sitePackages(venv), ...sitePackages(realSearchEnv())]
  const dirs = [process.env.SPAN_NVRTC13_DIR, ...sites.map((sp) => join(sp, 'nvidia', 'cu13', 'lib'))]
  for (const d of dirs) {
    if (!d || !existsSync(join(d, 'libnvrtc.so.13'))) continue
    const builtins = readdirSync(d).find((f) => /^libnvrtc-builtins\.so\.13(\.\d+)*$/.test(f))
    if (builtins) return {nvrtc: join(d, 'libnvrtc.so.13'), builtins: join(d, builtins)}
  }
  return null
})()
