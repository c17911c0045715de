import {existsSync} from 'node:fs'
import {loadAddonFile} from '../../util/addon-load.js'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {type CudaLib, type SearchEnv, allCandidates, realSearchEnv} from './libs.js'

/** Interface version of native/cuda/src/addon.cc this code calls (kAbi there); a stale build is refused. */
export const CUDA_ABI = 2

/** What native/cuda/src/addon.cc probe() returns. */
export interface CudaProbe {
  cuda: {path: string; error: string}
  nvrtcBuiltins: {path: string; error: string}
  nvrtc: {path: string; error: string}
  cublasLt: {path: string; error: string}
  /** '' when the device query succeeded */
  error: string
  driverVersion: number
  deviceCount: number
  name: string
  totalMem: number
  freeMem: number
  ccMajor: number
  ccMinor: number
  smCount: number
  /** major·1000 + minor·10, −1 when NVRTC did not load */
  nvrtcVersion: number
  /** e.g. 130100, −1 when cuBLASLt did not load */
  cublasLtVersion: number
}

interface CudaAddon {
  abi(): number
  probe(candidates: Record<CudaLib, string[]>, ordinal: number): CudaProbe
}

/** native/cuda/build/Release/span_cuda.node, or SPAN_CUDA_ADDON when set. */
export function cudaAddonPath(): string {
  if (process.env.SPAN_CUDA_ADDON) return process.env.SPAN_CUDA_ADDON
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'native', 'cuda', 'build', 'Release', 'span_cuda.node')
}

let loaded: CudaAddon | string | null = null

/** The addon, or why it cannot be loaded (one line). */
function addon(): CudaAddon | string {
  if (loaded) return loaded
  const path = cudaAddonPath()
  if (!existsSync(path)) return (loaded = `the cuda loader is not built (${path} missing: run \`node native/build.mjs\`)`)
  try {
    const a = loadAddonFile<CudaAddon>(path)
    loaded = a.abi() === CUDA_ABI ? a : `the cuda loader is out of date (interface ${a.abi()}, span needs ${CUDA_ABI}: run \`node native/build.mjs\`)`
  } catch (err) {
    loaded = `the cuda loader failed to load (${(err as Error).message})`
  }
  return loaded
}

/** The addon itself (the device runtime's bindings too: device.ts), or why it cannot be loaded. */
export const loadCudaAddon = (): object | string => addon()

/** The probe of device `ordinal` (the addon opens the libraries libs.ts found), or why there is none. */
export function probeCuda(ordinal = 0, search: SearchEnv = realSearchEnv()): CudaProbe | string {
  const a = addon()
  if (typeof a === 'string') return a
  return a.probe(allCandidates(search), ordinal)
}
