import type * as tf from '@tensorflow/tfjs'
import type {CudaArg, Dim3} from './kernel-table.js'

/** What the census kernels share: grid sizes, rank-6 argument lists, dtypes. */
export const MAX_RANK = 6

export const BLOCK: Dim3 = [256, 1, 1]

export const sizeOf = (shape: readonly number[]): number => shape.reduce((a, b) => a * b, 1)

/** A grid-stride grid for n elements (0 blocks for n = 0: the launch is skipped). */
export const grid = (n: number): Dim3 => [Math.min(Math.ceil(n / BLOCK[0]), 4096), 1, 1]

/** xs right-aligned to MAX_RANK, padded on the left with `fill`. */
export function pad6(xs: readonly number[], fill: number): number[] {
  if (xs.length > MAX_RANK) throw new Error(`cuda backend: rank ${xs.length} above ${MAX_RANK}`)
  return [...new Array<number>(MAX_RANK - xs.length).fill(fill), ...xs]
}

export const i64s = (xs: readonly number[]): CudaArg[] => xs.map((v) => ({i64: v}))

/** Row-major element strides of a shape. */
export function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length).fill(1)
  for (let i = shape.length - 2; i >= 0; i--) s[i] = s[i + 1] * shape[i + 1]
  return s
}

/** 'f32' for float32, 'i32' for int32 and bool (stored as int32). */
export const suffix = (dtype: tf.DataType): 'f32' | 'i32' => (dtype === 'float32' ? 'f32' : 'i32')

/** Normalised axes of an attr (number, number[] or undefined = all). */
export function axesOf(axis: unknown, rank: number): number[] {
  const list = axis === undefined || axis === null ? [...Array(rank).keys()] : Array.isArray(axis) ? (axis as number[]) : [axis as number]
  return [...new Set(list.map((a) => (a < 0 ? a + rank : a)))].sort((a, b) => a - b)
}
