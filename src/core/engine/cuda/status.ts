import {type CudaProbe, probeCuda} from './addon.js'
import {defaultPrecisionWhy} from './bf16.js'
import {cudaIncludeDir} from './cuda-include.js'
import {nvrtcCannotTarget} from './nvrtc-targets.js'
import type {SearchEnv} from './libs.js'

/**
 * Whether the `cuda` backend can run here, and what `span doctor` says about it: the GPU,
 * its memory and compute capability, the driver and library versions and paths, or the
 * one-line reason it is unavailable.
 */
export interface CudaStatus {
  available: boolean
  /** the doctor's line: the device, or why not */
  detail: string
  probe?: CudaProbe
}

const GiB = 2 ** 30

/** 12080 → "12.8", 13010 → "13.1" (CUDA's major·1000 + minor·10). */
export const cudaVersion = (v: number): string => `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}`

/** cuBLASLt's version number (major·10000 + minor·100 + patch) as text. */
const ltVersion = (v: number): string => `${Math.floor(v / 10000)}.${Math.floor((v % 10000) / 100)}.${v % 100}`

/** Why the probe cannot serve the backend, or null when the GPU and every library are there. */
function missing(p: CudaProbe): string | null {
  if (p.error) return p.error
  if (!p.nvrtc.path) return `libnvrtc is not found (${p.nvrtc.error}; pip install nvidia-cuda-nvrtc, or set SPAN_CUDA_LIBS)`
  if (!p.cublasLt.path) return `libcublasLt is not found (${p.cublasLt.error}; pip install nvidia-cublas, or set SPAN_CUDA_LIBS)`
  return nvrtcCannotTarget(p.nvrtcVersion, p.ccMajor * 10 + p.ccMinor)
}

/** One line: GPU, memory, CC, SMs, driver, NVRTC and cuBLASLt with their paths, the CUDA headers, the default precision. */
export function describeProbe(p: CudaProbe): string {
  const mem = `${(p.totalMem / GiB).toFixed(1)} GiB (${(p.freeMem / GiB).toFixed(1)} free)`
  const libs = [
    `driver ${cudaVersion(p.driverVersion)} (${p.cuda.path})`,
    `NVRTC ${cudaVersion(p.nvrtcVersion)} (${p.nvrtc.path})`,
    `cuBLASLt ${ltVersion(p.cublasLtVersion)} (${p.cublasLt.path})`,
  ]
  const inc = cudaIncludeDir(p.nvrtc.path)
  const headers = inc ? `CUDA headers ${inc}` : 'no CUDA headers (mma.h: set SPAN_CUDA_INCLUDE; bf16 and fp16 attention run on fp32 FMA kernels)'
  const precision = `default precision ${defaultPrecisionWhy(p.ccMajor * 10 + p.ccMinor)}`
  return `${p.name}, ${mem}, compute capability ${p.ccMajor}.${p.ccMinor}, ${p.smCount} SMs; ${libs.join(', ')}; ${headers}; ${precision}`
}

/** The cuda line: available when the driver sees the device and NVRTC and cuBLASLt load (start.ts then self-checks it). */
export function cudaStatus(ordinal = 0, search?: SearchEnv): CudaStatus {
  const p = probeCuda(ordinal, search)
  if (typeof p === 'string') return {available: false, detail: p}
  const why = missing(p)
  if (why) return {available: false, detail: why, probe: p}
  return {available: true, detail: describeProbe(p), probe: p}
}
