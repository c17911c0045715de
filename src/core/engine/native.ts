import * as tf from '@tensorflow/tfjs'
import {existsSync, readFileSync} from 'node:fs'
import {loadAddonFile} from '../util/addon-load.js'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {type NativeAddon, kernelCounts, registerKernels, setKernelsEnabled} from './native-kernels.js'
import {watchCpuBackend} from './native-pool.js'
import type {NativePrecision} from './native-precision.js'

export {poolStats as nativePoolStats, resetPool as resetNativePool} from './native-pool.js'

export {kernelCounts as nativeKernelCounts}

/**
 * The `native` backend: TensorFlow.js's `cpu` backend with its heavy kernels (matrix
 * products, elementwise ops, softmax, reductions, transposes, gather/scatter) replaced by
 * span's Node-API addon (native/, built by `npm install` with node-gyp, GEMM from the system
 * CBLAS when one was found at build time). Kernels it does not handle fall back to tfjs' own.
 */
export interface NativeStatus {
  /** the addon loaded */
  available: boolean
  /** BLAS behind its GEMM ("openblas (SkylakeX)", "blis", "accelerate", "builtin" = our own kernel); '' when unavailable */
  blas: string
  /** threads of its pool (BLAS runs single-threaded inside it) */
  threads: number
  /** why it is unavailable */
  error?: string
}

let addon: NativeAddon | null = null
let status: NativeStatus | null = null

/**
 * native/build/Release/span_native.node, from src/core/engine or dist/core/engine alike; or
 * SPAN_NATIVE_ADDON when set (another build, or a missing path to turn native off).
 */
export function addonPath(): string {
  if (process.env.SPAN_NATIVE_ADDON) return process.env.SPAN_NATIVE_ADDON
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'native', 'build', 'Release', 'span_native.node')
}

/** Interface version of native/src/addon.cc this code calls (kAbi there); a stale build is refused. */
export const NATIVE_ABI = 7

/**
 * Loads the addon once (later calls return the same status). `threads` sets the pool size
 * (default: every core); the addon pins OpenBLAS to one thread so that only its pool runs.
 */
export function loadNative(threads?: number): NativeStatus {
  if (!status) status = tryLoad()
  if (addon && threads !== undefined) setNativeThreads(threads)
  return {...status, threads: addon ? addon.info().threads : 0}
}

function tryLoad(): NativeStatus {
  const path = addonPath()
  if (!existsSync(path)) {
    return {available: false, blas: '', threads: 0, error: `the addon is not built (${path} missing: run \`npm install\` or \`node native/build.mjs\`)`}
  }
  pickOpenBlasCore()
  try {
    addon = loadAddonFile<NativeAddon>(path)
  } catch (err) {
    return {available: false, blas: '', threads: 0, error: `the addon failed to load (${(err as Error).message})`}
  }
  const info = addon.info()
  if (info.abi !== NATIVE_ABI) {
    addon = null
    return {available: false, blas: '', threads: 0, error: `the addon is out of date (interface ${info.abi ?? 1}, span needs ${NATIVE_ABI}: run \`node native/build.mjs\`)`}
  }
  return {available: true, blas: info.blas, threads: info.threads}
}

/**
 * OpenBLAS 0.3.21 (Debian 12) does not recognise Zen 4 and falls back to its Prescott
 * kernels (~15 GFLOP/s instead of ~70 per core). It reads OPENBLAS_CORETYPE when the library
 * loads, so unless the user set it, name the kernel set the CPU's flags support: SkylakeX
 * for AVX-512, Haswell for AVX2+FMA. Linux x86-64 only; elsewhere OpenBLAS detects itself.
 */
function pickOpenBlasCore(): void {
  if (process.env.OPENBLAS_CORETYPE || process.platform !== 'linux' || process.arch !== 'x64') return
  let flags: Set<string>
  try {
    const line = readFileSync('/proc/cpuinfo', 'utf8').split('\n').find((l) => l.startsWith('flags'))
    flags = new Set((line ?? '').split(':')[1]?.trim().split(/\s+/) ?? [])
  } catch {
    return
  }
  if (['avx512f', 'avx512bw', 'avx512dq', 'avx512vl'].every((f) => flags.has(f))) process.env.OPENBLAS_CORETYPE = 'SkylakeX'
  else if (flags.has('avx2') && flags.has('fma')) process.env.OPENBLAS_CORETYPE = 'Haswell'
}

/** Sets the addon's pool size (n >= 1). */
export function setNativeThreads(n: number): void {
  if (!addon) throw new Error('the native addon is not loaded')
  addon.setThreads(Math.max(1, Math.floor(n)))
}

/**
 * Replaces tfjs' cpu kernels with the addon's (idempotent). Returns the kernel names now
 * served natively; throws when the addon is unavailable.
 */
export function registerNativeKernels(): string[] {
  const s = loadNative()
  if (!addon) throw new Error(s.error ?? 'the native addon is not loaded')
  const cpu = tf.findBackend('cpu')
  if (cpu) watchCpuBackend(cpu)
  return registerKernels(addon)
}

/**
 * Turns the registered native kernels off (each delegates to tfjs' own cpu kernel) or back
 * on: for comparing against the reference kernels in tests and benchmarks.
 */
export function setNativeKernelsEnabled(on: boolean): void {
  setKernelsEnabled(on)
}

/**
 * Starts the `native` backend: loads the addon, registers its kernels and makes `cpu`
 * current. Null on success, else why it cannot (the shape of backend.ts' tryBackend).
 */
export async function startNative(threads?: number): Promise<string | null> {
  const s = loadNative(threads)
  if (!s.available) return s.error ?? 'the native addon is not available'
  registerNativeKernels()
  setKernelsEnabled(true)
  if (!(await tf.setBackend('cpu'))) return 'the cpu backend failed to start'
  watchCpuBackend(tf.backend())
  const cpu = tf.backend() as unknown as {firstUse?: boolean}
  if ('firstUse' in cpu) cpu.firstUse = false // no "install tfjs-node" banner: native was chosen on purpose
  return null
}

/**
 * The matrix products' precision of the addon (process-wide, native/src/gemm.h set_gemm_precision):
 * fp32, or bf16 (operands rounded to bf16, fp32 accumulation: native-precision.ts). initBackend
 * sets it when native starts; a CPU without bf16 dot products is refused there, not here.
 */
export function setNativePrecision(p: NativePrecision): void {
  if (!addon) throw new Error('the native addon is not loaded')
  addon.setPrecision(p)
}

/** The addon's current precision (fp32 when it is not loaded). */
export function nativePrecision(): NativePrecision {
  return addon?.info().precision ?? 'fp32'
}

/** The loaded addon, for the helpers in native-ops.ts (null when not loaded). */
export function nativeAddon(): NativeAddon | null {
  return addon
}
