import * as tf from '@tensorflow/tfjs'
import {setWasmPaths} from '@tensorflow/tfjs-backend-wasm'
import {createRequire} from 'node:module'
import {dirname, join, sep} from 'node:path'
import {SpanError} from '../stream/errors.js'
import {setCudaOptions} from './cuda/backend.js'
import {PRECISIONS, type Precision} from './cuda/bf16.js'
import {startCudaBackend} from './cuda/start.js'
import {setNativeKernelsEnabled, setNativePrecision, startNative} from './native.js'
import {cpuPrecision} from './backend-precision.js'

/** What `--backend` accepts. `auto` takes the fastest that initialises. */
export const BACKEND_CHOICES = ['auto', 'cuda', 'tensorflow-gpu', 'tensorflow', 'native', 'wasm', 'cpu'] as const
export type BackendChoice = (typeof BACKEND_CHOICES)[number]
export {PRECISIONS}
export {backendPrecision} from './backend-precision.js'
export type ConcreteBackend = Exclude<BackendChoice, 'auto'>

/**
 * Fastest first: span's own GPU backend (cuda, where a GPU and its libraries work), libtensorflow
 * (GPU, CPU), then our Node-API kernels over BLAS, then wasm.
 */
export const AUTO_ORDER: readonly ConcreteBackend[] = ['cuda', 'tensorflow-gpu', 'tensorflow', 'native', 'wasm', 'cpu']

export interface BackendInfo {
  /** the backend asked for, resolved (never 'auto') */
  name: ConcreteBackend
  /** tfjs' own name of the registered backend ('tensorflow', 'wasm', 'cpu'; native runs as 'cpu') */
  tfName: string
}

/** --threads (native), --device and --precision (cuda) as a command got them; undefined: not given. */
export interface BackendOptions {
  threads?: number
  device?: number
  precision?: string
  /**
   * Which of `device` and `precision` a resumed run's saved config gave, not typed for this run:
   * on a backend other than cuda those are dropped with a one-line notice (the run continues at
   * fp32 on the CPU) rather than refused, as typed ones are.
   */
  inherited?: readonly string[]
  /** the flag that gave `precision`, as errors name it (default --precision; encode's is --compute-precision) */
  precisionFlag?: string
}

/**
 * Initialises the chosen backend and makes it current. An explicit choice that cannot
 * start is a SpanError; `auto` falls through AUTO_ORDER to the first that starts, and when
 * that is slower than native because the addon is missing, says so in one line (`notice`,
 * stderr by default), since training there runs an order of magnitude slower. `--device` and
 * `--precision tf32|fp16` on a backend other than cuda, and `bf16` other than on cuda or on native
 * where the CPU has bf16 dot products, are usage errors (exit 2), checked before an explicit
 * choice starts and after `auto` resolved (backend-precision.ts cpuPrecision): a run asked for in
 * bf16 is not silently run at another precision. Native starts at the precision resolved there.
 */
export async function initBackend(choice: BackendChoice = 'auto', opts: number | BackendOptions = {}, notice: (line: string) => void = (line) => void process.stderr.write(`${line}
`)): Promise<BackendInfo> {
  const o = typeof opts === 'number' ? {threads: opts} : opts
  const precision = (PRECISIONS as readonly string[]).includes(o.precision ?? '') ? (o.precision as Precision) : undefined
  if (o.device !== undefined || precision !== undefined) setCudaOptions({...(o.device === undefined ? {} : {device: o.device}), ...(precision ? {precision} : {})})
  if (choice !== 'auto') {
    const cpu = cpuPrecision(choice, o, false, notice) // every flag checked before the backend starts
    const why = await tryBackend(choice, o.threads)
    if (why !== null) throw new SpanError(`--backend ${choice} is not available: ${why}`)
    if (choice === 'native') setNativePrecision(cpu ?? 'fp32')
    return {name: choice, tfName: tf.getBackend()}
  }
  let nativeWhy: string | null = null
  for (const name of AUTO_ORDER) {
    const why = await tryBackend(name, o.threads)
    if (why === null) {
      const cpu = cpuPrecision(name, o, true, notice)
      if (name === 'native') setNativePrecision(cpu ?? 'fp32')
      if (nativeWhy !== null) notice(`span: the native backend is unavailable (${nativeWhy}); using ${name}, several times slower (see span doctor)`)
      return {name, tfName: tf.getBackend()}
    }
    if (name === 'native') nativeWhy = why
  }
  throw new SpanError('no TensorFlow.js backend could be initialised')
}

/** Starts one backend; null on success, else the reason it could not. */
async function tryBackend(name: ConcreteBackend, threads?: number): Promise<string | null> {
  const why = await startBackend(name, threads)
  if (why === null && tf.getBackend() === 'cpu') quietCpuBanner()
  return why
}

/**
 * tfjs' cpu backend prints a multi-line "install tfjs-node" banner to stderr on first use
 * (MathBackendCPU.write, guarded by its `firstUse` field). span chose this backend on purpose,
 * and its stderr carries one-line errors, so the banner is turned off.
 */
function quietCpuBanner(): void {
  const backend = tf.backend() as unknown as {firstUse?: boolean}
  if ('firstUse' in backend) backend.firstUse = false
}

async function startBackend(name: ConcreteBackend, threads?: number): Promise<string | null> {
  try {
    switch (name) {
      case 'cuda':
        return await startCudaBackend()
      case 'tensorflow-gpu':
        return await startNode('@tensorflow/tfjs-node-gpu')
      case 'tensorflow':
        return await startNode('@tensorflow/tfjs-node')
      case 'native':
        return await startNative(threads) // the cpu backend with native kernels registered
      case 'wasm':
        return await startWasm()
      case 'cpu':
        setNativeKernelsEnabled(false) // plain tfjs kernels, also where the addon is loaded
        return (await tf.setBackend('cpu')) ? null : 'the cpu backend failed to start'
    }
  } catch (err) {
    return (err as Error).message.split('\n')[0]
  }
}

/**
 * Both tfjs-node packages register the 'tensorflow' kernels as their modules load, even where
 * their binding then fails to load; `auto` tries -gpu and then the CPU one, whose import would
 * print tfjs' "The kernel '…' for backend 'tensorflow' is already registered" (kernel_registry.ts
 * registerKernel, through log.warn = console.warn) once per kernel. Those lines alone are dropped.
 */
async function importQuietly(pkg: string): Promise<void> {
  const warn = console.warn
  console.warn = (...args: unknown[]) => {
    // spread-ok: console.warn's own arguments
    if (!/^The kernel '[^']+' for backend 'tensorflow' is already registered$/.test(String(args[0]))) warn(...args)
  }
  try {
    await import(pkg)
  } finally {
    console.warn = warn
  }
}

/**
 * tfjs-node(-gpu) are optional: they need libtensorflow, which cannot always be installed.
 * Importing one registers the 'tensorflow' backend. The specifier is a variable so that
 * TypeScript does not require the package at build time.
 */
async function startNode(pkg: string): Promise<string | null> {
  try {
    await importQuietly(pkg)
  } catch (err) {
    return `${pkg} is not installed (${(err as Error).message.split('\n')[0]})`
  }
  return (await tf.setBackend('tensorflow')) ? null : `${pkg} is installed but its backend failed to start`
}

/**
 * The wasm backend under Node: the .wasm binaries are read from the package's dist/ folder
 * (a file path with a trailing separator; platform fetch cannot read file paths). Threads
 * do not start under Node, so the single-threaded SIMD binary is what runs.
 */
async function startWasm(): Promise<string | null> {
  setWasmPaths(wasmDir())
  return (await tf.setBackend('wasm')) ? null : 'the wasm backend failed to start'
}

export function wasmDir(): string {
  const require = createRequire(import.meta.url)
  return join(dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json')), 'dist') + sep
}
