import type * as tf from '@tensorflow/tfjs'
import {type CudaDevice, type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {BLOCK, axesOf, grid, i64s, pad6, sizeOf, stridesOf} from './launch-util.js'

/**
 * Shape census kernels: Reshape, Identity, ExpandDims and Squeeze alias their input (a new
 * TensorInfo on the same device block, refcount + 1, no launch); Transpose, Slice, SplitV,
 * Concat, Pack, PadV2, Tile and BroadcastTo are strided copies (native/cuda/kernels/copy.cu).
 */
interface Refs {
  incRef(id: tf.DataId): void
}

function alias(backend: CudaDevice, x: tf.TensorInfo, shape: number[]): tf.TensorInfo {
  ;(backend as unknown as Refs).incRef(x.dataId)
  return {dataId: x.dataId, shape, dtype: x.dtype}
}

/** Fills in one -1 of a requested shape. */
function resolveShape(shape: number[], n: number): number[] {
  const known = shape.filter((d) => d !== -1).reduce((a, b) => a * b, 1)
  return shape.map((d) => (d === -1 ? (known === 0 ? 0 : n / known) : d))
}

/** dst region (sizes `dims`) ← src, with element strides and offsets on both sides. */
export function stridedCopy(b: CudaDevice, src: tf.TensorInfo, dst: tf.TensorInfo, dims: number[], s: number[], t: number[], sOff = 0, tOff = 0): void {
  const n = sizeOf(dims)
  const args = [...i64s(pad6(dims, 1)), ...i64s(pad6(s, 0)), ...i64s(pad6(t, 0))]
  b.launch('copy', 'span_strided_copy', grid(n), BLOCK, [{ptr: src}, {ptr: dst}, {i64: n}, {i64: sOff}, {i64: tOff}, ...args])
}

const transpose: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x!
  const perm = attrs!.perm as number[]
  const xs = stridesOf(x.shape)
  const shape = perm.map((p) => x.shape[p])
  const out = backend.makeOutput(shape, x.dtype)
  stridedCopy(
    backend,
    x,
    out,
    shape,
    perm.map((p) => xs[p]),
    stridesOf(shape),
  )
  return out
}

/** out = x[begin : begin + size] */
function slice(backend: CudaDevice, x: tf.TensorInfo, begin: number[], size: number[]): tf.TensorInfo {
  const xs = stridesOf(x.shape)
  const dims = size.map((s, i) => (s === -1 ? x.shape[i] - begin[i] : s))
  const out = backend.makeOutput(dims, x.dtype)
  stridedCopy(
    backend,
    x,
    out,
    dims,
    xs,
    stridesOf(dims),
    begin.reduce((o, b, i) => o + b * xs[i], 0),
  )
  return out
}

const sliceKernel: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x!
  const begin = typeof attrs!.begin === 'number' ? [attrs!.begin] : (attrs!.begin as number[])
  const size = typeof attrs!.size === 'number' ? [attrs!.size] : (attrs!.size as number[])
  const b = x.shape.map((_, i) => begin[i] ?? 0)
  return slice(
    backend,
    x,
    b,
    x.shape.map((d, i) => size[i] ?? d - b[i]),
  )
}

const splitV: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x!
  const axis = axesOf(attrs!.axis, x.shape.length)[0]
  let sizes = attrs!.numOrSizeSplits as number | number[]
  if (typeof sizes === 'number') sizes = new Array<number>(sizes).fill(x.shape[axis] / sizes)
  const known = sizes.filter((s) => s !== -1).reduce((a, b) => a + b, 0)
  let at = 0
  return sizes.map((s) => {
    const len = s === -1 ? x.shape[axis] - known : s
    const begin = x.shape.map((_, i) => (i === axis ? at : 0))
    at += len
    return slice(
      backend,
      x,
      begin,
      x.shape.map((d, i) => (i === axis ? len : d)),
    )
  })
}

/** Inputs laid side by side along `axis` (every input already of the output's rank). */
function concat(backend: CudaDevice, xs: tf.TensorInfo[], axis: number): tf.TensorInfo {
  const shape = xs[0].shape.map((d, i) => (i === axis ? xs.reduce((s, x) => s + x.shape[axis], 0) : d))
  const out = backend.makeOutput(shape, xs[0].dtype)
  const os = stridesOf(shape)
  let at = 0
  for (const x of xs) {
    if (sizeOf(x.shape) > 0) stridedCopy(backend, x, out, x.shape, stridesOf(x.shape), os, 0, at * os[axis])
    at += x.shape[axis]
  }
  return out
}

const concatKernel: CudaKernel = ({inputs, attrs, backend}) => {
  const xs = Object.values(inputs).filter((t): t is tf.TensorInfo => !!t)
  const axis = axesOf(attrs!.axis, xs[0].shape.length)[0]
  return concat(backend, xs, axis)
}

const pack: CudaKernel = ({inputs, attrs, backend}) => {
  const xs = Object.values(inputs).filter((t): t is tf.TensorInfo => !!t)
  const rank = xs[0].shape.length + 1
  const axis = (attrs!.axis as number) < 0 ? (attrs!.axis as number) + rank : (attrs!.axis as number)
  const expanded = xs.map((x) => ({...x, shape: [...x.shape.slice(0, axis), 1, ...x.shape.slice(axis)]}))
  return concat(backend, expanded, axis)
}

const padV2: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x!
  const pads = attrs!.paddings as [number, number][]
  const shape = x.shape.map((d, i) => d + pads[i][0] + pads[i][1])
  const out = backend.fill(shape, x.dtype, Number(attrs!.constantValue ?? 0))
  const os = stridesOf(shape)
  stridedCopy(
    backend,
    x,
    out,
    x.shape,
    stridesOf(x.shape),
    os,
    0,
    pads.reduce((o, p, i) => o + p[0] * os[i], 0),
  )
  return out
}

const tile: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x!
  const shape = x.shape.map((d, i) => d * (attrs!.reps as number[])[i])
  const out = backend.makeOutput(shape, x.dtype)
  const n = sizeOf(shape)
  const args = [...i64s(pad6(shape, 1)), ...i64s(pad6(x.shape, 1)), ...i64s(pad6(stridesOf(x.shape), 0))]
  backend.launch('copy', 'span_tile', grid(n), BLOCK, [{ptr: x}, {ptr: out}, {i64: n}, ...args])
  return out
}

const reshape: CudaKernel = ({inputs, attrs, backend}) => alias(backend, inputs.x!, resolveShape(attrs!.shape as number[], sizeOf(inputs.x!.shape)))

function expandDims(x: tf.TensorInfo, dim: number): number[] {
  const axis = dim < 0 ? dim + x.shape.length + 1 : dim
  return [...x.shape.slice(0, axis), 1, ...x.shape.slice(axis)]
}

function squeeze(x: tf.TensorInfo, axis: unknown): number[] {
  const axes = axis === undefined || (Array.isArray(axis) && axis.length === 0) ? x.shape.map((d, i) => (d === 1 ? i : -1)) : axesOf(axis, x.shape.length)
  return x.shape.filter((_, i) => !axes.includes(i))
}

export function registerShape(): void {
  registerCudaKernel('Reshape', reshape)
  registerCudaKernel('Identity', ({inputs, backend}) => alias(backend, inputs.x!, inputs.x!.shape))
  registerCudaKernel('ExpandDims', ({inputs, attrs, backend}) => alias(backend, inputs.input!, expandDims(inputs.input!, attrs!.dim as number)))
  registerCudaKernel('Squeeze', ({inputs, attrs, backend}) => alias(backend, inputs.x!, squeeze(inputs.x!, attrs!.axis)))
  registerCudaKernel('Transpose', transpose)
  registerCudaKernel('Slice', sliceKernel)
  registerCudaKernel('SplitV', splitV)
  registerCudaKernel('Concat', concatKernel)
  registerCudaKernel('Pack', pack)
  registerCudaKernel('PadV2', padV2)
  registerCudaKernel('Tile', tile)
}
