import type * as tf from '@tensorflow/tfjs'
import {type CudaDevice, type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {stridedCopy} from './kernels-shape.js'
import {BLOCK, axesOf, grid, sizeOf, stridesOf, suffix} from './launch-util.js'

/**
 * Reductions (native/cuda/kernels/reduce.cu): the reduced axes are moved last by a transpose
 * when they are not already, then one row per output element. Sum, Mean, Max, Min, Prod, Any,
 * All, ArgMax, ArgMin (first index), Softmax over the last axis.
 */
const OPS: Record<string, number> = {Sum: 0, Max: 1, Min: 2, Mean: 3, Prod: 4, Any: 5, All: 6}

/** x as [rows, cols] with `axes` last: the same tensor when they are, else a transposed copy (to free). */
function rowsLast(backend: CudaDevice, x: tf.TensorInfo, axes: number[]): {t: tf.TensorInfo; rows: number; cols: number; outShape: number[]; temp: boolean} {
  const keep = x.shape.map((_, i) => i).filter((i) => !axes.includes(i))
  const outShape = keep.map((i) => x.shape[i])
  const cols = sizeOf(axes.map((a) => x.shape[a]))
  const rows = sizeOf(outShape)
  const inOrder = axes.every((a, j) => a === x.shape.length - axes.length + j)
  if (inOrder) return {t: x, rows, cols, outShape, temp: false}
  const perm = [...keep, ...axes]
  const shape = perm.map((p) => x.shape[p])
  const t = backend.makeOutput(shape, x.dtype)
  const xs = stridesOf(x.shape)
  stridedCopy(
    backend,
    x,
    t,
    shape,
    perm.map((p) => xs[p]),
    stridesOf(shape),
  )
  return {t, rows, cols, outShape, temp: true}
}

const keepDims = (x: tf.TensorInfo, axes: number[]): number[] => x.shape.map((d, i) => (axes.includes(i) ? 1 : d))

function reduce(name: string): CudaKernel {
  return ({inputs, attrs, backend}) => {
    const x = inputs.x!
    const axes = axesOf(attrs?.axis ?? attrs?.reductionIndices, x.shape.length) // Max and Min call it reductionIndices
    const {t, rows, cols, outShape, temp} = rowsLast(backend, x, axes)
    const dtype = name === 'Mean' && x.dtype !== 'float32' ? null : name === 'Any' || name === 'All' ? 'bool' : x.dtype === 'bool' ? 'int32' : x.dtype
    if (!dtype) return (temp && backend.free(t), null)
    const out = backend.makeOutput(attrs?.keepDims ? keepDims(x, axes) : outShape, dtype)
    backend.launch('reduce', `span_reduce_${suffix(x.dtype)}`, grid(rows), BLOCK, [{ptr: t}, {ptr: out}, {i32: OPS[name]}, {i64: rows}, {i64: cols}])
    if (temp) backend.free(t)
    return out
  }
}

function argReduce(isMin: number): CudaKernel {
  return ({inputs, attrs, backend}) => {
    const x = inputs.x!
    const axes = axesOf(attrs?.axis ?? 0, x.shape.length)
    const {t, rows, cols, outShape, temp} = rowsLast(backend, x, axes)
    const out = backend.makeOutput(outShape, 'int32')
    backend.launch('reduce', `span_argreduce_${suffix(x.dtype)}`, grid(rows), BLOCK, [{ptr: t}, {ptr: out}, {i32: isMin}, {i64: rows}, {i64: cols}])
    if (temp) backend.free(t)
    return out
  }
}

const softmax: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.logits!
  const dim = (attrs?.dim as number) ?? -1
  if (x.dtype !== 'float32' || (dim !== -1 && dim !== x.shape.length - 1)) return null
  const cols = x.shape[x.shape.length - 1] ?? 1
  const rows = cols === 0 ? 0 : sizeOf(x.shape) / cols
  const out = backend.makeOutput(x.shape, 'float32')
  backend.launch('reduce', 'span_softmax_f32', grid(rows), BLOCK, [{ptr: x}, {ptr: out}, {i64: rows}, {i64: cols}])
  return out
}

export function registerReduce(): void {
  for (const name of Object.keys(OPS)) registerCudaKernel(name, reduce(name))
  registerCudaKernel('ArgMax', argReduce(0))
  registerCudaKernel('ArgMin', argReduce(1))
  registerCudaKernel('Softmax', softmax)
}
