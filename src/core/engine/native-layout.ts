import * as tf from '@tensorflow/tfjs'
import {type KernelArgs, type KernelBackend, type TsKernel, type Values, alloc, size, valuesOf} from './kernel-util.js'

/**
 * The data-movement kernels of the `native` backend: Concat, Slice, PadV2, Pack, Unpack, Tile
 * and OneHot. Plain TypeScript, no addon: every output is built from contiguous runs copied
 * with TypedArray.set (a memcpy), where tfjs' cpu kernels walk most of these element by
 * element through TensorBuffer index arithmetic (Slice of a non-contiguous box, PadV2, Tile).
 *
 * Every output is a fresh copy, never a view: tfjs' Slice (and Concat/Pack of one non-empty
 * input) return storage shared with their input, which pins a pooled buffer for good (see
 * native-pool.ts). float32 outputs come from the pool; int32 and bool ones are fresh
 * Int32Array/Uint8Array (the pool holds float32 only). Any other dtype (complex64, string),
 * storage that does not match its dtype, or arguments tfjs would reject return null, so that
 * tfjs' own kernel runs (and throws its own errors).
 */

/** Row-major element strides of a shape. */
function stridesOf(shape: readonly number[]): number[] {
  const s = new Array<number>(shape.length)
  let n = 1
  for (let i = shape.length - 1; i >= 0; i--) {
    s[i] = n
    n *= shape[i]
  }
  return s
}

/** Runs shorter than this are copied element by element (a subarray costs an allocation). */
const SHORT_RUN = 32

/**
 * The axes of `shape` with two operands' element strides along them (as, bs), pushed onto
 * dims/aOut/bOut: size-1 axes dropped, and an axis merged into the one above it where both
 * operands step through the pair as one. False (and nothing to walk) when an axis is empty.
 */
export function mergeAxes(shape: readonly number[], as: readonly number[], bs: readonly number[], dims: number[], aOut: number[], bOut: number[]): boolean {
  for (let i = 0; i < shape.length; i++) {
    const d = shape[i]
    if (d === 0) return false
    if (d === 1) continue
    const last = dims.length - 1
    if (last >= 0 && aOut[last] === as[i] * d && bOut[last] === bs[i] * d) {
      dims[last] *= d
      aOut[last] = as[i]
      bOut[last] = bs[i]
    } else {
      dims.push(d)
      aOut.push(as[i])
      bOut.push(bs[i])
    }
  }
  return true
}

/**
 * Copies a box of `shape` elements from src (element strides srcStrides, from srcOff) to dst
 * (dstStrides, from dstOff). Size-1 axes are dropped and axes both sides walk contiguously
 * are merged first, so the copy is a loop over runs as long as the layout allows.
 */
export function copyBox(src: Values, srcOff: number, srcStrides: readonly number[], dst: Values, dstOff: number, dstStrides: readonly number[], shape: readonly number[]): void {
  const dims: number[] = []
  const ss: number[] = []
  const ds: number[] = []
  if (!mergeAxes(shape, srcStrides, dstStrides, dims, ss, ds)) return
  let r = dims.length
  let run = 1
  if (r > 0 && ss[r - 1] === 1 && ds[r - 1] === 1) run = dims[--r]
  // the innermost remaining axis as a strided loop, the ones above it by an odometer
  const n = r > 0 ? dims[r - 1] : 1
  const sIn = r > 0 ? ss[r - 1] : 0
  const dIn = r > 0 ? ds[r - 1] : 0
  const outer = r > 1 ? size(dims.slice(0, r - 1)) : 1
  const idx = new Array<number>(Math.max(r - 1, 0)).fill(0)
  let so = srcOff
  let d0 = dstOff
  for (let o = 0; o < outer; o++) {
    if (run >= SHORT_RUN) {
      for (let k = 0, s = so, d = d0; k < n; k++, s += sIn, d += dIn) dst.set(src.subarray(s, s + run), d)
    } else if (run === 1) {
      for (let k = 0, s = so, d = d0; k < n; k++, s += sIn, d += dIn) dst[d] = src[s]
    } else {
      for (let k = 0, s = so, d = d0; k < n; k++, s += sIn, d += dIn) for (let j = 0; j < run; j++) dst[d + j] = src[s + j]
    }
    for (let j = r - 2; j >= 0; j--) {
      so += ss[j]
      d0 += ds[j]
      if (++idx[j] < dims[j]) break
      so -= ss[j] * dims[j]
      d0 -= ds[j] * dims[j]
      idx[j] = 0
    }
  }
}

/** The inputs of a kernel that takes a list (Concat, Pack): all present, one dtype, values readable. */
function listInputs(backend: KernelBackend, inputs: KernelArgs['inputs']): {infos: tf.TensorInfo[]; values: Values[]} | null {
  const infos = Object.values(inputs) as (tf.TensorInfo | undefined)[]
  if (infos.length === 0 || infos.some((t) => !t)) return null
  const values: Values[] = []
  for (const t of infos) {
    const v = valuesOf(backend, t)
    if (!v || t!.dtype !== infos[0]!.dtype) return null
    values.push(v)
  }
  return {infos: infos as tf.TensorInfo[], values}
}

/**
 * Concat (tfjs-backend-cpu concat): inputs of one rank, equal but for the axis, of float32,
 * int32 or bool; each copied as rows of its own inner size into the output's rows. Empty
 * inputs contribute nothing; a single non-empty input is copied, not aliased.
 */
const concat: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const list = listInputs(backend, inputs)
  if (!list) return null
  const {infos, values} = list
  const rank = infos[0].shape.length
  if (rank === 0) return null
  const [axis] = tf.util.parseAxisParam(attrs?.axis as number, infos[0].shape)
  if (axis === undefined || axis < 0 || axis >= rank) return null
  const outShape = infos[0].shape.slice()
  outShape[axis] = 0
  for (const t of infos) {
    if (t.shape.length !== rank || t.shape.some((d, i) => i !== axis && d !== infos[0].shape[i])) return null
    outShape[axis] += t.shape[axis]
  }
  const dtype = infos[0].dtype
  const out = alloc(dtype, size(outShape))
  const outStrides = stridesOf(outShape)
  let at = 0
  infos.forEach((t, i) => {
    copyBox(values[i], 0, stridesOf(t.shape), out, at * outStrides[axis], outStrides, t.shape)
    at += t.shape[axis]
  })
  return backend.makeTensorInfo(outShape, dtype, out)
}

/**
 * Pack (tf.stack; tfjs-backend-cpu pack = expandDims + concat): N inputs of one shape and
 * dtype interleaved along a new axis (negative counts from the end of the output's rank).
 * One input is left to tfjs, whose expandDims is a reshape that shares the data without a view.
 */
const pack: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const list = listInputs(backend, inputs)
  if (!list || list.infos.length < 2) return null
  const {infos, values} = list
  const shape = infos[0].shape
  if (infos.some((t) => t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i]))) return null
  const rank = shape.length
  let axis = Number(attrs?.axis ?? 0)
  if (axis < 0) axis += rank + 1
  if (!Number.isInteger(axis) || axis < 0 || axis > rank) return null
  const outShape = [...shape.slice(0, axis), infos.length, ...shape.slice(axis)]
  const out = alloc(infos[0].dtype, size(outShape))
  const outStrides = stridesOf(outShape)
  const dstStrides = outStrides.filter((_, i) => i !== axis) // the output's walk of one input's axes
  const xStrides = stridesOf(shape)
  values.forEach((v, i) => copyBox(v, 0, xStrides, out, i * outStrides[axis], dstStrides, shape))
  return backend.makeTensorInfo(outShape, infos[0].dtype, out)
}

/** Unpack (tf.unstack; tfjs-backend-cpu unpack, whose pieces are slices: views when contiguous): copies. */
const unpack: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.value
  const x = valuesOf(backend, t)
  if (!t || !x || t.shape.length === 0) return null
  const rank = t.shape.length
  let axis = Number(attrs?.axis ?? 0)
  if (axis < 0) axis += rank
  if (!Number.isInteger(axis) || axis < 0 || axis >= rank) return null
  const outShape = t.shape.filter((_, i) => i !== axis)
  const xStrides = stridesOf(t.shape)
  const srcStrides = xStrides.filter((_, i) => i !== axis)
  const outStrides = stridesOf(outShape)
  return Array.from({length: t.shape[axis]}, (_, i) => {
    const out = alloc(t.dtype, size(outShape))
    copyBox(x, i * xStrides[axis], srcStrides, out, 0, outStrides, outShape)
    return backend.makeTensorInfo(outShape, t.dtype, out)
  })
}

/**
 * Slice (tfjs-backend-cpu slice: a subarray view when the box is contiguous, else element by
 * element through TensorBuffer): always a copy. begin/size as tfjs parses them (a number for
 * every axis, size −1 = to the end); a box outside x is left to tfjs, which throws.
 */
const slice: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.x
  const x = valuesOf(backend, t)
  if (!t || !x || t.shape.length === 0) return null
  let begin: number[]
  let sizes: number[]
  try {
    ;[begin, sizes] = tf.slice_util.parseSliceParams(t, attrs?.begin as number | number[], attrs?.size as number | number[])
    tf.slice_util.assertParamsValid(t, begin, sizes)
  } catch {
    return null
  }
  if (begin.length !== t.shape.length || sizes.some((d, i) => !(d >= 0) || !(begin[i] >= 0) || begin[i] + d > t.shape[i])) return null
  const xStrides = stridesOf(t.shape)
  const out = alloc(t.dtype, size(sizes))
  const from = begin.reduce((a, b, i) => a + b * xStrides[i], 0)
  copyBox(x, from, xStrides, out, 0, stridesOf(sizes), sizes)
  return backend.makeTensorInfo(sizes, t.dtype, out)
}

/**
 * PadV2 (tf.pad in constant mode; tfjs-backend-cpu padV2 places each element through index
 * arithmetic): the output filled with constantValue, then x copied in as a box. Negative
 * paddings (cropping) are left to tfjs.
 */
const padV2: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.x
  const x = valuesOf(backend, t)
  const paddings = attrs?.paddings as [number, number][] | undefined
  if (!t || !x || !Array.isArray(paddings) || paddings.length !== t.shape.length) return null
  if (paddings.some((p) => !Array.isArray(p) || !Number.isInteger(p[0]) || !Number.isInteger(p[1]) || p[0] < 0 || p[1] < 0)) return null
  const outShape = t.shape.map((d, i) => paddings[i][0] + d + paddings[i][1])
  const out = alloc(t.dtype, size(outShape))
  out.fill(Number(attrs?.constantValue ?? 0))
  const outStrides = stridesOf(outShape)
  const at = paddings.reduce((a, p, i) => a + p[0] * outStrides[i], 0)
  copyBox(x, 0, stridesOf(t.shape), out, at, outStrides, t.shape)
  return backend.makeTensorInfo(outShape, t.dtype, out)
}

/**
 * Tile (tfjs-backend-cpu tile: element by element through TensorBuffer): x copied into the
 * output's first box, then, from the innermost axis out, each filled block of that axis
 * doubled in place (copyWithin, or fill for single elements) until it spans reps copies.
 */
const tile: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.x
  const x = valuesOf(backend, t)
  const reps = attrs?.reps as number[] | undefined
  if (!t || !x || !Array.isArray(reps) || reps.length !== t.shape.length || reps.some((r) => !Number.isInteger(r) || r < 0)) return null
  const shape = t.shape
  const rank = shape.length
  const outShape = shape.map((d, i) => d * reps[i])
  const out = alloc(t.dtype, size(outShape))
  if (out.length === 0) return backend.makeTensorInfo(outShape, t.dtype, out)
  const outStrides = stridesOf(outShape)
  copyBox(x, 0, stridesOf(shape), out, 0, outStrides, shape)
  for (let axis = rank - 1; axis >= 0; axis--) {
    const r = reps[axis]
    if (r === 1) continue
    const block = shape[axis] * outStrides[axis] // x's extent along the axis, all inner axes already tiled: contiguous
    const total = block * r
    // every position of the axes above it, in x's extent (the part filled so far)
    const dims = shape.slice(0, axis)
    const idx = new Array<number>(axis).fill(0)
    const count = size(dims)
    let at = 0
    for (let o = 0; o < count; o++) {
      if (block === 1) out.fill(out[at], at + 1, at + total)
      else for (let filled = block; filled < total; filled += Math.min(filled, total - filled)) out.copyWithin(at + filled, at, at + Math.min(filled, total - filled))
      for (let j = axis - 1; j >= 0; j--) {
        at += outStrides[j]
        if (++idx[j] < dims[j]) break
        at -= outStrides[j] * dims[j]
        idx[j] = 0
      }
    }
  }
  return backend.makeTensorInfo(outShape, t.dtype, out)
}

/**
 * OneHot (tfjs-backend-cpu oneHot, which stores a Float32Array whatever the dtype): [...indices,
 * depth] of offValue with onValue at each index in [0, depth); indices outside that range give a
 * row of offValue. float32 output from the pool, int32 as an Int32Array (on/off values
 * truncated to int32, as a cast would); other dtypes are left to tfjs.
 */
const oneHot: TsKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.indices
  if (!t || t.dtype !== 'int32') return null
  const idx = valuesOf(backend, t) as Int32Array | null
  const dtype = (attrs?.dtype ?? 'int32') as tf.DataType
  const depth = Number(attrs?.depth)
  if (!idx || (dtype !== 'float32' && dtype !== 'int32') || !Number.isInteger(depth) || depth < 0) return null
  const on = Number(attrs?.onValue ?? 1)
  const off = Number(attrs?.offValue ?? 0)
  const n = idx.length
  const out = alloc(dtype, n * depth)
  out.fill(off)
  for (let i = 0; i < n; i++) {
    const k = idx[i]
    if (k >= 0 && k < depth) out[i * depth + k] = on
  }
  return backend.makeTensorInfo([...t.shape, depth], dtype, out)
}

/** The layout kernels, by tfjs kernel name (merged into native-kernels.ts' NATIVE_KERNELS). */
export const LAYOUT_KERNELS = {
  Concat: concat,
  Pack: pack,
  Unpack: unpack,
  Slice: slice,
  PadV2: padV2,
  Tile: tile,
  OneHot: oneHot,
} satisfies Record<string, TsKernel>
