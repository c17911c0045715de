import type * as tf from '@tensorflow/tfjs'
import {totalmem} from 'node:os'

/**
 * Reuse of the native kernels' output buffers. A fresh Float32Array costs page faults on every
 * first touch (~1 GB/s here, slower than the kernels that fill it), so buffers of disposed
 * outputs are kept and handed to the next kernel that needs about that length. Lengths are
 * rounded up to size classes (four per octave: 4, 5, 6 or 7 times a power of two, so at most
 * a quarter is spare) and a shorter request gets a prefix view of the class's buffer: training
 * batches of varying sequence length then reuse each other's buffers instead of filling the
 * pool with lengths that never come back.
 *
 * A buffer is only recycled when nothing else can still see it. The cpu backend is watched at
 * the three places where its arrays escape:
 *  - write() (every tensor's storage is registered through it): a second registration of the
 *    same array, or any other view into it (tfjs' Slice, SplitV, … return subarrays), pins it;
 *  - readSync()/read() (dataSync, data, arraySync): the array is handed to the caller, pinned;
 *  - disposeData(): when its entry is deleted and the buffer is ours, unpinned and registered
 *    once, it goes back to the pool.
 * SPAN_NATIVE_POOL_MB caps what the pool keeps (default: an eighth of RAM, at most 4 GiB; 0 turns reuse off).
 */
const owned = new WeakSet<ArrayBuffer>() // buffers our kernels allocated
const pinned = new WeakSet<ArrayBuffer>() // escaped or aliased: never recycled
const registrations = new WeakMap<ArrayBuffer, number>() // live cpu-backend entries holding the buffer
const handed = new WeakMap<ArrayBuffer, Float32Array>() // the array (whole or prefix view) allocF32 last gave out
const free = new Map<number, Float32Array[]>() // whole buffers by class length
let pooledBytes = 0
let capBytes = process.env.SPAN_NATIVE_POOL_MB !== undefined ? Number(process.env.SPAN_NATIVE_POOL_MB) * 2 ** 20 : Math.min(4 * 2 ** 30, totalmem() / 8)
let stats = {reused: 0, allocated: 0, recycled: 0}

/** The size class of a length: the least 4·2^k, 5·2^k, 6·2^k or 7·2^k not below n (n itself below 8). */
export function sizeClass(n: number): number {
  if (n < 8) return n
  const unit = 2 ** (Math.floor(Math.log2(n)) - 2) // n lies in [4·unit, 8·unit)
  return Math.ceil(n / unit) * unit
}

/** A Float32Array of length n whose contents are arbitrary (the caller overwrites all of it). */
export function allocF32(n: number): Float32Array {
  const c = sizeClass(n)
  let whole = free.get(c)?.pop()
  if (whole) {
    pooledBytes -= whole.byteLength
    stats.reused++
  } else {
    whole = new Float32Array(c)
    if (c > 0) owned.add(whole.buffer as ArrayBuffer)
    stats.allocated++
  }
  const out = n === c ? whole : whole.subarray(0, n)
  if (c > 0) handed.set(whole.buffer as ArrayBuffer, out)
  return out
}

/** Whether `values` is exactly the array allocF32 handed out for its buffer (not a view made from it). */
function isHanded(values: Float32Array, buf: ArrayBuffer): boolean {
  return handed.get(buf) === values
}

/**
 * True when `values` is one of our buffers as handed out, held by exactly one backend entry
 * and never read out (dataSync) or aliased: the tensor's owner may then update it in place.
 */
export function isPrivate(values: unknown): values is Float32Array {
  const buf = ourBuffer(values)
  return buf !== null && !pinned.has(buf) && registrations.get(buf) === 1 && isHanded(values as Float32Array, buf)
}

/** Gives back a scratch buffer from allocF32 that no tensor ever held. */
export function releaseF32(values: Float32Array): void {
  const buf = values.buffer as ArrayBuffer
  if (!registrations.get(buf)) recycle(values)
}

function recycle(values: unknown): void {
  if (!(values instanceof Float32Array)) return
  const buf = values.buffer as ArrayBuffer
  if (!owned.has(buf) || pinned.has(buf) || !isHanded(values, buf)) return
  if (pooledBytes + buf.byteLength > capBytes) return
  handed.delete(buf)
  const whole = new Float32Array(buf)
  let list = free.get(whole.length)
  if (!list) free.set(whole.length, (list = []))
  list.push(whole)
  pooledBytes += buf.byteLength
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
    registerWrite(values)
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
    if (!b.data.has(id)) unregister(values)
    return deleted
  }
}

/** A pooled buffer handed to the backend: one more registration; pinned unless handed out once. */
function registerWrite(values: unknown): void {
  const buf = ourBuffer(values)
  if (!buf) return
  const n = registrations.get(buf) ?? 0
  if (n > 0 || !(values instanceof Float32Array && isHanded(values, buf))) pinned.add(buf)
  registrations.set(buf, n + 1)
}

/** The backend let go of `values`: one registration fewer; recycled when none is left. */
function unregister(values: unknown): void {
  const buf = ourBuffer(values)
  if (!buf) return
  const n = (registrations.get(buf) ?? 1) - 1
  registrations.set(buf, n)
  if (n === 0) recycle(values)
}

/** Counts since start (or the last reset), and what the pool holds now. */
export function poolStats(): {reused: number; allocated: number; recycled: number; pooledMB: number} {
  return {...stats, pooledMB: +(pooledBytes / 2 ** 20).toFixed(1)}
}

/** The most bytes the pool keeps (the memory plan sets it: train/run-plan.ts). */
export const poolCapBytes = (): number => capBytes

/** Empties the pool; `mb` sets a new cap (0 turns reuse off for buffers disposed from now on). */
export function resetPool(mb?: number): void {
  free.clear()
  pooledBytes = 0
  stats = {reused: 0, allocated: 0, recycled: 0}
  if (mb !== undefined) capBytes = mb * 2 ** 20
}
