import {loadAddonFile} from '../util/addon-load.js'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

/** native/src/dist.cc: Open MPI and NCCL loaded with dlopen. */
export interface DistAddon {
  loadMpi(path?: string): string // '' when loaded, else why not
  init(): [number, number, string] // rank, size, library version
  allReduceSum(buf: Float32Array | Float64Array): void
  broadcast(buf: ArrayBufferView, root: number): void
  barrier(): void
  finalize(): void
  abort(code: number): void
  loadNccl(path?: string): string // 'version N', else why not
  ncclUniqueId(): Uint8Array // 128 bytes
}

export function distAddonPath(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'native', 'build', 'Release', 'span_dist.node')
}

let cached: {addon: DistAddon | null; error: string | null} | null = null

/** The span_dist addon, or why it cannot be loaded (not built: `node native/build.mjs`). */
export function loadDistAddon(): {addon: DistAddon | null; error: string | null} {
  if (cached) return cached
  try {
    cached = {addon: loadAddonFile<DistAddon>(distAddonPath()), error: null}
  } catch (err) {
    const why = (err as Error).message
    cached = {addon: null, error: `the span_dist addon is not built (node native/build.mjs): ${why}`}
  }
  return cached
}
