import {createHash} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {loadCudaAddon} from './addon.js'
import {cudaIncludeDir} from './cuda-include.js'
import {allCandidates, realSearchEnv} from './libs.js'
import type {CudaArg, Dim3} from './kernel-table.js'

/** The device runtime of native/cuda/src/device.h as the addon binds it (bindings.cc). */
export interface CudaRuntime {
  open(candidates: Record<string, string[]>, ordinal: number): number
  alloc(bytes: number): number
  free(ptr: number): void
  emptyCache(): void
  stats(): AllocatorStats
  /** peakBytes back to liveBytes, so that the next stats() gives the peak since this call */
  resetPeak(): void
  upload(ptr: number, src: ArrayBufferView): void
  downloadSync(ptr: number, dst: ArrayBufferView): void
  copy(dst: number, src: number, bytes: number): void
  memsetD32(ptr: number, value: number, count: number): void
  sync(): void
  readStart(ptr: number, bytes: number): number
  readPoll(id: number, dst: ArrayBufferView): boolean
  loadModule(source: string, name: string, options: string[]): number
  getFunction(module: number, name: string): number
  launch(fn: number, grid: number[], block: number[], shared: number, types: string, values: number[]): void
  gemm(v: number[]): void
}

/** The caching allocator's figures (bytes): handed out, the most ever handed out, cached free, blocks out, held on the device. */
export interface AllocatorStats {
  liveBytes: number
  peakBytes: number
  cachedBytes: number
  liveBlocks: number
  deviceBytes: number
}

/** native/cuda/kernels, from src/core/engine/cuda or dist/core/engine/cuda alike. */
export const KERNEL_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..', 'native', 'cuda', 'kernels')

const TYPE_OF: Record<string, string> = {ptr: 'p', i32: 'i', u32: 'u', i64: 'l', f32: 'f'}

/**
 * The opened device: modules compiled once per process by source hash, defines and arch, and
 * functions looked up once; `launch` packs typed arguments. Pointers of tensors are resolved
 * by the caller (backend.ts) into numbers before they reach here.
 */
export class CudaDevice0 {
  readonly arch: number
  private functions = new Map<string, number>()
  private modules = new Map<string, number>()
  launches = 0

  constructor(
    readonly rt: CudaRuntime,
    readonly ordinal: number,
  ) {
    this.arch = rt.open(allCandidates(realSearchEnv()), ordinal)
  }

  /** The function `fn` of native/cuda/kernels/FILE.cu compiled with these defines. */
  fn(file: string, fn: string, defines: Record<string, string | number> = {}): number {
    const defs = Object.entries(defines).map(([k, v]) => `-D${k}=${v}`)
    const key = `${file}\0${fn}\0${defs.join(' ')}`
    let f = this.functions.get(key)
    if (f !== undefined) return f
    const source = readFileSync(join(KERNEL_DIR, `${file}.cu`), 'utf8')
    const modKey = `${createHash('sha256').update(source).digest('hex')}\0${defs.join(' ')}\0${this.arch}`
    let m = this.modules.get(modKey)
    // -I: a kernel may include headers of its folder (#include "x.cuh"), and CUDA's (<mma.h>) where a toolkit is
    const inc = [KERNEL_DIR, ...(source.includes('<mma.h>') ? [cudaIncludeDir()] : [])].filter((d) => d).map((d) => `-I${d}`)
    if (m === undefined) this.modules.set(modKey, (m = this.rt.loadModule(source, `${file}.cu`, ['--std=c++17', ...inc, ...defs])))
    this.functions.set(key, (f = this.rt.getFunction(m, fn)))
    return f
  }

  launch(f: number, grid: Dim3, block: Dim3, args: CudaArg[], resolve: (p: CudaArg) => number, shared = 0): void {
    const types = args.map((a) => TYPE_OF[Object.keys(a)[0]]).join('')
    this.rt.launch(f, grid, block, shared, types, args.map(resolve))
    this.launches++
  }
}

/** Opens device `ordinal` through the addon, or says why not (one line). */
export function openDevice(ordinal: number): CudaDevice0 | string {
  const a = loadCudaAddon()
  if (typeof a === 'string') return a
  try {
    return new CudaDevice0(a as unknown as CudaRuntime, ordinal)
  } catch (err) {
    return (err as Error).message.split('\n')[0]
  }
}
