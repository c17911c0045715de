import * as tf from '@tensorflow/tfjs'
import {broadcastShape, broadcastStrides} from '../kernel-util.js'
import {type CudaDevice, type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {BLOCK, grid, i64s, pad6, sizeOf, suffix} from './launch-util.js'

/**
 * Elementwise census kernels on the device (native/cuda/kernels/binary.cu, unary.cu): binary
 * ops with numpy broadcasting, comparisons and logic (bool out), unary math, Cast, Select,
 * ZerosLike/OnesLike/Fill. Each returns null (cpu fallback, backend-register.ts) for what it
 * does not take (string or complex tensors).
 */
const ARITH: Record<string, number> = {Add: 0, Sub: 1, Multiply: 2, RealDiv: 3, Maximum: 4, Minimum: 5, Pow: 6, SquaredDifference: 7, FloorDiv: 8}
const COMPARE: Record<string, number> = {Equal: 0, NotEqual: 1, Greater: 2, GreaterEqual: 3, Less: 4, LessEqual: 5, LogicalAnd: 6, LogicalOr: 7}
const UNARY: Record<string, number> = {
  Neg: 0,
  Square: 1,
  Sqrt: 2,
  Rsqrt: 3,
  Exp: 4,
  Log: 5,
  Tanh: 6,
  Relu: 7,
  Step: 8,
  Abs: 9,
  Erf: 10,
  Sigmoid: 11,
  Reciprocal: 12,
  Log1p: 13,
  Floor: 14,
  Ceil: 15,
  Sign: 16,
}
const INT_UNARY = new Set(['Neg', 'Square', 'Relu', 'Abs', 'Sign'])

const storable = (t: tf.TensorInfo | undefined): t is tf.TensorInfo => !!t && (t.dtype === 'float32' || t.dtype === 'int32' || t.dtype === 'bool')

/** out = a op b, broadcast; `compare` ops give bool. */
function binary(backend: CudaDevice, a: tf.TensorInfo, b: tf.TensorInfo, op: number, compare: boolean): tf.TensorInfo | null {
  const shape = broadcastShape(a.shape, b.shape)
  if (!shape) return null
  const t = a.dtype === 'float32' || b.dtype === 'float32' ? 'f32' : 'i32'
  if (t === 'f32' && (a.dtype !== 'float32' || b.dtype !== 'float32')) return null // tfjs casts before; be safe
  const out = backend.makeOutput(shape, compare ? 'bool' : a.dtype)
  const n = sizeOf(shape)
  const args = [...i64s(pad6(shape, 1)), ...i64s(pad6(broadcastStrides(a.shape, shape.length), 0)), ...i64s(pad6(broadcastStrides(b.shape, shape.length), 0))]
  const fn = compare ? `span_compare_${t}` : `span_binary_${t}`
  backend.launch('binary', fn, grid(n), BLOCK, [{ptr: a}, {ptr: b}, {ptr: out}, {i32: op}, {i64: n}, ...args])
  return out
}

const binaryKernel =
  (op: number, compare: boolean): CudaKernel =>
  ({inputs, backend}) =>
    storable(inputs.a) && storable(inputs.b) ? binary(backend, inputs.a, inputs.b, op, compare) : null

function unary(name: string): CudaKernel {
  return ({inputs, attrs, backend}) => {
    const x = inputs.x
    if (!storable(x)) return null
    const out = backend.makeOutput(x.shape, x.dtype)
    const n = sizeOf(x.shape)
    if (x.dtype === 'float32')
      backend.launch('unary', 'span_unary_f32', grid(n), BLOCK, [{ptr: x}, {ptr: out}, {i32: UNARY[name]}, {f32: Number(attrs?.alpha ?? 0)}, {i64: n}])
    else if (INT_UNARY.has(name)) backend.launch('unary', 'span_unary_i32', grid(n), BLOCK, [{ptr: x}, {ptr: out}, {i32: UNARY[name]}, {i64: n}])
    else return (backend.free(out), null)
    return out
  }
}

const cast: CudaKernel = ({inputs, attrs, backend}) => {
  const x = inputs.x
  const to = attrs?.dtype as tf.DataType
  if (!storable(x) || !['float32', 'int32', 'bool'].includes(to)) return null
  const out = backend.makeOutput(x.shape, to)
  const n = sizeOf(x.shape)
  const from = suffix(x.dtype)
  const fn =
    to === 'bool' ? `span_cast_${from}_bool` : to === 'float32' ? (from === 'f32' ? '' : 'span_cast_i32_f32') : from === 'f32' ? 'span_cast_f32_i32' : ''
  if (fn) backend.launch('unary', fn, grid(n), BLOCK, [{ptr: x}, {ptr: out}, {i64: n}])
  else
    backend.launch('copy', 'span_strided_copy', grid(n), BLOCK, [
      {ptr: x},
      {ptr: out},
      {i64: n},
      {i64: 0},
      {i64: 0},
      ...i64s(pad6([n], 1)),
      ...i64s(pad6([1], 0)),
      ...i64s(pad6([1], 0)),
    ])
  return out
}

const select: CudaKernel = ({inputs, backend}) => {
  const {condition: c, t: a, e: b} = inputs
  if (!storable(c) || !storable(a) || !storable(b) || a.shape.join() !== b.shape.join()) return null
  const n = sizeOf(a.shape)
  const inner = c.shape.length === a.shape.length ? 1 : c.shape.length === 1 ? n / Math.max(c.shape[0], 1) : 0
  if (!inner) return null
  const out = backend.makeOutput(a.shape, a.dtype)
  backend.launch('index', 'span_select', grid(n), BLOCK, [{ptr: c}, {ptr: a}, {ptr: b}, {ptr: out}, {i64: n}, {i64: inner}])
  return out
}

/** Σ of the inputs (same shape and dtype), pairwise through the binary kernel. */
const addN: CudaKernel = ({inputs, backend}) => {
  const xs = Object.values(inputs).filter((t): t is tf.TensorInfo => storable(t))
  if (xs.length === 0) return null
  if (xs.length === 1) {
    const z = backend.zeros(xs[0].shape, xs[0].dtype)
    const out = binary(backend, xs[0], z, 0, false)
    backend.free(z)
    return out
  }
  let acc = binary(backend, xs[0], xs[1], 0, false)
  for (const x of xs.slice(2)) {
    const next = binary(backend, acc!, x, 0, false)
    backend.free(acc!)
    acc = next
  }
  return acc
}

export function registerElementwise(): void {
  for (const [name, op] of Object.entries(ARITH)) registerCudaKernel(name, binaryKernel(op, false))
  for (const [name, op] of Object.entries(COMPARE)) registerCudaKernel(name, binaryKernel(op, true))
  for (const name of Object.keys(UNARY)) registerCudaKernel(name, unary(name))
  registerCudaKernel('LogicalNot', ({inputs, backend}) => {
    const x = inputs.x!
    const out = backend.makeOutput(x.shape, 'bool')
    backend.launch('unary', 'span_unary_i32', grid(sizeOf(x.shape)), BLOCK, [{ptr: x}, {ptr: out}, {i32: 30}, {i64: sizeOf(x.shape)}])
    return out
  })
  registerCudaKernel('Cast', cast)
  registerCudaKernel('AddN', addN)
  registerCudaKernel('Select', select)
  registerCudaKernel('ZerosLike', ({inputs, backend}) => (storable(inputs.x) ? backend.zeros(inputs.x.shape, inputs.x.dtype) : null))
  registerCudaKernel('OnesLike', ({inputs, backend}) => (storable(inputs.x) ? backend.fill(inputs.x.shape, inputs.x.dtype, 1) : null))
  registerCudaKernel('Fill', ({attrs, backend}) => backend.fill(attrs!.shape as number[], (attrs!.dtype as tf.DataType) ?? 'float32', Number(attrs!.value)))
}
