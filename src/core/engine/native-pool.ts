import type * as tf from '@tensorflow/tfjs'
import {totalmem} from 'node:os'

/**
 * Reuse of the native kernels' output buffers. A fresh Float32Array costs page faults on every
 * first touch (~1 GB/s here, slower than the kernels that fill it), so buffers of disposed
 * outputs are kept by length and handed to the next kernel that needs that length.
 *
 * A buffer is only recycled when nothing else can still see it. The cpu backend is watched at
 * the three places where its arrays escape:
 *  - write() (every tensor's storage is registered through it): a second registration of the
 *    same array, or a view into it (tfjs' Slice, SplitV, … return subarrays), pins the buffer;
 *  - readSync()/read() (dataSync, data, arraySync): the array is handed to the caller, pinned;
 *  - disposeData(): when its entry is deleted and the buffer is ours, unpinned and registered
 *    once, it goes back to the pool.
 * SPAN_NATIVE_POOL_MB caps what the pool keeps (default: an eighth of RAM, at most 4 GiB; 0 turns reuse off).
 */
const owned = new WeakSet<ArrayBuffer>() // buffers our kernels allocated
const pinned = new WeakSet<ArrayBuffer>() // escaped or aliased: never recycled
const registrations = new WeakMap<ArrayBuffer, number>() // live cpu-backend entries holding the buffer
const free = new Map<number, Float32Array[]>()
let pooledBytes = 0
let capBytes = process.env.SPAN_NATIVE_POOL_MB !== undefined ? Number(process.env.SPAN_NATIVE_POOL_MB) * 2 ** 20 : Math.min(4 * 2 ** 30, totalmem() / 8)
let stats = {reused: 0, allocated: 0, recycled: 0}

/** A Float32Array of length n whose contents are arbitrary (the caller overwrites all of it). */
export function allocF32(n: number): Float32Array {
  const list = free.get(n)
  const reused = list?.pop()
  if (reused) {
    pooledBytes -= reused.byteLength
    stats.reused++
    return reused
  }
  const fresh = new Float32Array(n)
  if (n > 0) owned.add(fresh.buffer as ArrayBuffer)
  stats.allocated++
  return fresh
}

/**
 * True when `values` is one of our buffers, whole, held by exactly one backend entry and never
 * handed out (dataSync) or aliased: the tensor's owner may then update it in place.
 */
export function isPrivate(values: unknown): values is Float32Array {
  const buf = ourBuffer(values)
  return buf !== null && !pinned.has(buf) && registrations.get(buf) === 1 && (values as Float32Array).byteLength === buf.byteLength
}

/** Gives back a scratch buffer from allocF32 that no tensor ever held. */
export function releaseF32(values: Float32Array): void {
  const buf = values.buffer as ArrayBuffer
  if (!registrations.get(buf)) recycle(values)
}

function recycle(values: unknown): void {
  if (!(values instanceof Float32Array)) return
  const buf = values.buffer as ArrayBuffer
  if (!owned.has(buf) || pinned.has(buf) || values.byteOffset !== 0 || values.byteLength !== buf.byteLength) return
  if (pooledBytes + values.byteLength > capBytes) return
  let list = free.get(values.length)
  if (!list) free.set(values.length, (list = []))
  list.push(values)
  pooledBytes += values.byteLength
  stats.recycled++
}

/** Buffer of a typed array the backend stores, if one of ours. */
function ourBuffer(values: unknown): ArrayBuffer | null {
  if (!ArrayBuffer.isView(values)) return null
  const buf = values.buffer as ArrayBuffer
  return owned.has(buf) ? buf : null
}

interface CpuBackendInternals {
  data: {get(id: tf.DataId): {values?: unknown} | undefined; has(id: tf.DataId): boolean}
  write(values: unknown, shape: number[], dtype: tf.DataType): tf.DataId
  readSync(id: tf.DataId): unknown
  read(id: tf.DataId): Promise<unknown>
  disposeData(id: tf.DataId, force?: boolean): boolean
  __spanPool?: true
}

/** Installs the watch on the cpu backend instance (idempotent). */
export function watchCpuBackend(backend: unknown): void {
  const b = backend as CpuBackendInternals
  if (b.__spanPool || capBytes <= 0) return
  b.__spanPool = true
  const write = b.write.bind(b)
  const readSync = b.readSync.bind(b)
  const read = b.read.bind(b)
  const disposeData = b.disposeData.bind(b)
  const pin = (values: unknown) => {
    const buf = ourBuffer(values)
    if (buf) pinned.add(buf)
  }
  b.write = (values, shape, dtype) => {
    const buf = ourBuffer(values)
    if (buf) {
      const n = registrations.get(buf) ?? 0
      const whole = values instanceof Float32Array && values.byteOffset === 0 && values.byteLength === buf.byteLength
      if (n > 0 || !whole) pinned.add(buf)
      registrations.set(buf, n + 1)
    }
    return write(values, shape, dtype)
  }
  b.readSync = (id) => {
    const v = readSync(id)
    pin(v)
    return v
  }
  b.read = async (id) => {
    const v = await read(id)
    pin(v)
    return v
  }
  b.disposeData = (id, force) => {
    const values = b.data.get(id)?.values
    const deleted = disposeData(id, force)
    if (b.data.has(id)) return deleted
    const buf = ourBuffer(values)
    if (buf) {
      const n = (registrations.get(buf) ?? 1) - 1
      registrations.set(buf, n)
      if (n === 0) recycle(values)
    }
    return deleted
  }
}

/** Counts since start (or the last reset), and what the pool holds now. */
export function poolStats(): {reused: number; allocated: number; recycled: number; pooledMB: number} {
  return {...stats, pooledMB: +(pooledBytes / 2 ** 20).toFixed(1)}
}

/** Empties the pool; `mb` sets a new cap (0 turns reuse off for buffers disposed from now on). */
export function resetPool(mb?: number): void {
  free.clear()
  pooledBytes = 0
  stats = {reused: 0, allocated: 0, recycled: 0}
  if (mb !== undefined) capBytes = mb * 2 ** 20
}
