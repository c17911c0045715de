import * as tf from '@tensorflow/tfjs'
import {type KernelArgs, type KernelBackend, type Values, alloc, broadcastShape, broadcastStrides, size, valuesOf} from './kernel-util.js'
import {mergeAxes} from './native-layout.js'
import {allocF32} from './native-pool.js'

/**
 * The comparison, logical, selection and dtype kernels of the `native` backend: Equal, NotEqual,
 * Greater, GreaterEqual, Less, LessEqual, LogicalAnd, LogicalOr, LogicalNot, Select, Step,
 * Cast, ZerosLike and OnesLike. Plain TypeScript, no addon. tfjs' cpu kernels broadcast by
 * index arithmetic on every element (indexToLoc / locToIndex); here the output's axes are
 * first collapsed (size-1 axes dropped, axes both operands walk alike merged), so every
 * broadcasting pattern is a loop over contiguous output rows, each read with a step of 1 or 0
 * (a broadcast operand) from either side.
 *
 * The values are tfjs' own, element for element: comparisons are JavaScript's on the stored
 * numbers (NaN compares false, and unequal), LogicalAnd/Or are `a && b` / `a || b`, Select
 * takes t where the condition is exactly 1, Step maps NaN to NaN. Cast to float32 writes a real
 * Float32Array, where tfjs' cast of bool or int32 keeps the input's Uint8Array/Int32Array under
 * the new dtype (an alias that makes every later native kernel on it fall back); int32 values
 * beyond ±2^24 are thus rounded to float32 here, not there.
 *
 * float32 outputs come from the pool (native-pool.ts); int32 and bool ones are fresh
 * Int32Array/Uint8Array. Other dtypes, storage that does not match its dtype, shapes tfjs would
 * reject, and the cases listed at each kernel return null, so that tfjs' own kernel runs.
 */

/** A kernel of NATIVE_KERNELS (the addon argument is unused here). */
type CompareKernel = (addon: unknown, args: KernelArgs) => tf.TensorInfo | null

/** The stored numbers of a tensor whatever its dtype says (tfjs' cast aliases a bool array as float32). */
function numbersOf(backend: KernelBackend, t: tf.TensorInfo | undefined): Values | null {
  if (!t || (t.dtype !== 'float32' && t.dtype !== 'int32' && t.dtype !== 'bool')) return null
  const v = backend.data.get(t.dataId).values
  return v instanceof Float32Array || v instanceof Int32Array || v instanceof Uint8Array ? v : null
}

/**
 * One output row: out[o + k] = a[i + k·sa] (op) b[j + k·sb] for k < n. The steps are 1 or 0
 * (the operand broadcast along the row).
 */
type RowOp = (a: Values, i: number, sa: number, b: Values, j: number, sb: number, out: Values, o: number, n: number) => void

/**
 * out = a (row) b with numpy broadcasting into `out` (row-major, outShape, not empty). Each
 * operand's element strides along the output's axes (0 where it is broadcast), size-1 axes
 * dropped and neighbours merged where both operands step through them as one; then the
 * innermost axis is a row and the axes above it are walked by an odometer. Equal shapes and a
 * scalar operand come out as a single row; [N,T,H] against [N,1,H] or [N,T,1] as rows of H.
 */
function broadcastRows(row: RowOp, a: Values, aShape: readonly number[], b: Values, bShape: readonly number[], outShape: readonly number[], out: Values): void {
  const rank = outShape.length
  const aStrides = broadcastStrides(aShape, rank)
  const bStrides = broadcastStrides(bShape, rank)
  const dims: number[] = []
  const as: number[] = []
  const bs: number[] = []
  mergeAxes(outShape, aStrides, bStrides, dims, as, bs) // outShape has no empty axis
  const r = dims.length
  if (r === 0) return row(a, 0, 0, b, 0, 0, out, 0, 1)
  const n = dims[r - 1]
  const sa = as[r - 1]
  const sb = bs[r - 1]
  const total = out.length
  const up = r - 1 // axes above the row
  const idx = new Array<number>(up).fill(0)
  for (let o = 0, i = 0, j = 0; o < total; o += n) {
    row(a, i, sa, b, j, sb, out, o, n)
    for (let k = up - 1; k >= 0; k--) {
      i += as[k]
      j += bs[k]
      if (++idx[k] < dims[k]) break
      i -= as[k] * dims[k]
      j -= bs[k] * dims[k]
      idx[k] = 0
    }
  }
}

// The rows of each binary kernel: tfjs-backend-cpu's createSimpleBinaryKernelImpl ops, written
// without branches (a comparison's boolean as a number; LogicalAnd's `a && b` as b masked by
// a ≠ 0, LogicalOr's `a || b` as a, or b where a = 0: the same bytes), since masks and
// comparisons of real data are unpredictable branches. Equal steps (both 1, or both 0 for the
// single element of a rank-0 output) take the contiguous loop.
const ROWS = {
  Equal: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] === b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] === b[j])
  },
  NotEqual: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] !== b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] !== b[j])
  },
  Greater: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] > b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] > b[j])
  },
  GreaterEqual: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] >= b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] >= b[j])
  },
  Less: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] < b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] < b[j])
  },
  LessEqual: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = +(a[i + k] <= b[j + k])
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = +(a[i] <= b[j])
  },
  LogicalAnd: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = b[j + k] & -+(a[i + k] !== 0)
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = b[j] & -+(a[i] !== 0)
  },
  LogicalOr: (a, i, sa, b, j, sb, out, o, n) => {
    if (sa === sb) for (let k = 0; k < n; k++) out[o + k] = a[i + k] | (b[j + k] & -+(a[i + k] === 0))
    else for (const end = o + n; o < end; o++, i += sa, j += sb) out[o] = a[i] | (b[j] & -+(a[i] === 0))
  },
} satisfies Record<string, RowOp>

/**
 * A binary kernel with a bool output (tfjs-backend-cpu binaryKernelFunc(…, 'bool')): a and b
 * of one dtype (float32, int32 or bool; `bool` only for the logical ones, which tfjs asserts).
 */
function boolBinary(name: keyof typeof ROWS, logical: boolean): CompareKernel {
  const row = ROWS[name]
  return (_addon, {inputs, backend}) => {
    const {a: ta, b: tb} = inputs
    if (!ta || !tb || ta.dtype !== tb.dtype || (logical && ta.dtype !== 'bool')) return null
    const a = valuesOf(backend, ta)
    const b = valuesOf(backend, tb)
    const outShape = broadcastShape(ta.shape, tb.shape)
    if (!a || !b || !outShape) return null
    const out = new Uint8Array(size(outShape))
    if (out.length > 0) broadcastRows(row, a, ta.shape, b, tb.shape, outShape, out)
    return backend.makeTensorInfo(outShape, 'bool', out)
  }
}

/** LogicalNot (tfjs-backend-cpu: `x ? 0 : 1` into a Uint8Array) of bool. */
const logicalNot: CompareKernel = (_addon, {inputs, backend}) => {
  const t = inputs.x
  if (!t || t.dtype !== 'bool') return null
  const x = valuesOf(backend, t)
  if (!x) return null
  const n = x.length
  const out = new Uint8Array(n)
  for (let i = 0; i < n; i++) out[i] = +(x[i] === 0) // `x ? 0 : 1` without a branch (bytes are never NaN)
  return backend.makeTensorInfo(t.shape, 'bool', out)
}

/**
 * Select (tf.where, which broadcasts all three to one shape first; tfjs-backend-cpu select):
 * t where the condition is exactly 1, else e, into upcastType(t, e). The condition's numbers are
 * read whatever its dtype. A condition of another shape than t (tfjs' kernel takes a rank-1 one
 * against a higher-rank t, but then copies t[i] and e[i] across row i, not the row itself) and t
 * and e of different shapes are left to tfjs.
 */
const select: CompareKernel = (_addon, {inputs, backend}) => {
  const {condition: tc, t: tt, e: te} = inputs
  if (!tc || !tt || !te) return null
  const shape = tt.shape
  if (tc.shape.length !== shape.length || te.shape.length !== shape.length || shape.some((d, i) => tc.shape[i] !== d || te.shape[i] !== d)) return null
  const dtype = tf.upcastType(tt.dtype, te.dtype)
  const c = numbersOf(backend, tc)
  const t = valuesOf(backend, tt)
  const e = valuesOf(backend, te)
  if (!c || !t || !e || (dtype !== 'float32' && dtype !== 'int32' && dtype !== 'bool')) return null
  const n = size(shape)
  if (c.length !== n || t.length !== n || e.length !== n) return null
  const out = alloc(dtype, n)
  if (tt.dtype === te.dtype) {
    // one dtype: the bits of t or e, chosen by a mask (no branch), as 32-bit words or bytes
    const bits = (v: Values): Int32Array | Uint8Array => (v instanceof Uint8Array ? v : new Int32Array(v.buffer, v.byteOffset, v.length))
    const tb = bits(t)
    const eb = bits(e)
    const ob = bits(out)
    for (let i = 0; i < n; i++) {
      const m = -+(c[i] === 1)
      ob[i] = (tb[i] & m) | (eb[i] & ~m)
    }
  } else {
    for (let i = 0; i < n; i++) out[i] = c[i] === 1 ? t[i] : e[i] // converted to the upcast dtype as tfjs does
  }
  return backend.makeTensorInfo(shape, dtype, out)
}

/** Step (tfjs-backend-cpu step: NaN stays NaN, x > 0 gives 1, anything else attrs.alpha) of float32. */
const step: CompareKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.x
  if (!t || t.dtype !== 'float32') return null
  const x = valuesOf(backend, t)
  if (!x) return null
  const alpha = Number(attrs?.alpha) // tfjs stores the attribute as is: undefined becomes NaN there too
  const n = x.length
  const out = allocF32(n)
  // by table, without a branch: [x ≤ 0 (or −0), x > 0, NaN, —]
  const pick = Float64Array.of(alpha, 1, NaN, NaN)
  for (let i = 0; i < n; i++) {
    const v = x[i]
    out[i] = pick[+(v > 0) | (+(v !== v) << 1)]
  }
  return backend.makeTensorInfo(t.shape, 'float32', out)
}

/**
 * Cast (tfjs-backend-cpu cast) of bool or int32 to float32 (tfjs: the same storage under the
 * new dtype), float32 to int32 (tfjs: Int32Array.from, which truncates, NaN and ±Infinity to 0,
 * beyond 2^31 wrapping, as TypedArray.set does) and bool to int32. The input's stored numbers
 * are read whatever its dtype says. Other pairs (to bool, to the same dtype, complex64, string)
 * are left to tfjs.
 */
const cast: CompareKernel = (_addon, {inputs, backend, attrs}) => {
  const t = inputs.x
  const to = attrs?.dtype
  if (!t) return null
  const from = t.dtype
  const ok = (to === 'float32' && (from === 'bool' || from === 'int32')) || (to === 'int32' && (from === 'float32' || from === 'bool'))
  if (!ok) return null
  const x = numbersOf(backend, t)
  if (!x || x.length !== size(t.shape)) return null
  const out = to === 'float32' ? allocF32(x.length) : new Int32Array(x.length)
  out.set(x)
  return backend.makeTensorInfo(t.shape, to as 'float32' | 'int32', out)
}

/** ZerosLike / OnesLike (tfjs-backend-cpu fill with x's shape and dtype) of float32 (pooled) and int32. */
function fillLike(value: number): CompareKernel {
  return (_addon, {inputs, backend}) => {
    const t = inputs.x
    if (!t || (t.dtype !== 'float32' && t.dtype !== 'int32')) return null
    const n = size(t.shape)
    const out = t.dtype === 'float32' ? allocF32(n) : new Int32Array(n)
    if (value !== 0 || t.dtype === 'float32') out.fill(value)
    return backend.makeTensorInfo(t.shape, t.dtype, out)
  }
}

/** The comparison, logical, Select, Step, Cast and fill kernels, by tfjs kernel name (merged into native-kernels.ts' NATIVE_KERNELS). */
export const COMPARE_KERNELS = {
  Equal: boolBinary('Equal', false),
  NotEqual: boolBinary('NotEqual', false),
  Greater: boolBinary('Greater', false),
  GreaterEqual: boolBinary('GreaterEqual', false),
  Less: boolBinary('Less', false),
  LessEqual: boolBinary('LessEqual', false),
  LogicalAnd: boolBinary('LogicalAnd', true),
  LogicalOr: boolBinary('LogicalOr', true),
  LogicalNot: logicalNot,
  Select: select,
  Step: step,
  Cast: cast,
  ZerosLike: fillLike(0),
  OnesLike: fillLike(1),
} satisfies Record<string, CompareKernel>
