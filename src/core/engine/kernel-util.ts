import type * as tf from '@tensorflow/tfjs'
import {allocF32} from './native-pool.js'

/**
 * What the pure-TypeScript kernels of the native backend share (native-kernels.ts,
 * native-layout.ts, native-compare.ts): the slice of tfjs' cpu backend they use, storage
 * access by dtype, and numpy broadcasting. It imports none of them, so they never import each other.
 */

/** Storage of a float32, int32 or bool tensor on the cpu backend. */
export type Values = Float32Array | Int32Array | Uint8Array

/** The part of the cpu backend a kernel uses. */
export interface KernelBackend {
  data: {get(id: tf.DataId): {values?: unknown}}
  makeTensorInfo(shape: number[], dtype: tf.DataType, values: Values): tf.TensorInfo
}

/** What tfjs hands a kernel. */
export interface KernelArgs {
  inputs: Record<string, tf.TensorInfo | undefined>
  backend: KernelBackend
  attrs?: Record<string, unknown>
}

/** A kernel that needs no addon: its output(s), or null to let tfjs' own kernel run. */
export type TsKernel = (addon: unknown, args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[] | null

export const size = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1)

/** The values of a cpu-backend tensor of float32, int32 or bool, when stored as that dtype's array. */
export function valuesOf(backend: KernelBackend, t: tf.TensorInfo | undefined): Values | null {
  if (!t) return null
  const v = backend.data.get(t.dataId).values
  switch (t.dtype) {
    case 'float32':
      return v instanceof Float32Array ? v : null
    case 'int32':
      return v instanceof Int32Array ? v : null
    case 'bool':
      return v instanceof Uint8Array ? v : null
    default:
      return null
  }
}

/** numpy broadcasting of two shapes; null when they are incompatible (tfjs throws). */
export function broadcastShape(a: readonly number[], b: readonly number[]): number[] | null {
  const rank = Math.max(a.length, b.length)
  const out: number[] = []
  for (let i = 0; i < rank; i++) {
    const x = a[a.length - rank + i] ?? 1
    const y = b[b.length - rank + i] ?? 1
    if (x !== y && x !== 1 && y !== 1) return null
    out.push(x === 1 ? y : x)
  }
  return out
}

/** Element strides of `shape` read along `rank` right-aligned output axes: 0 where it has size 1 (broadcast) or no axis. */
export function broadcastStrides(shape: readonly number[], rank: number): number[] {
  const strides = new Array<number>(rank).fill(0)
  for (let i = shape.length - 1, s = 1; i >= 0; i--) {
    if (shape[i] !== 1) strides[rank - shape.length + i] = s
    s *= shape[i]
  }
  return strides
}

/** An output array of n elements, contents arbitrary: pooled for float32, fresh for int32 and bool. */
export function alloc(dtype: tf.DataType, n: number): Values {
  if (dtype === 'float32') return allocF32(n)
  return dtype === 'int32' ? new Int32Array(n) : new Uint8Array(n)
}
