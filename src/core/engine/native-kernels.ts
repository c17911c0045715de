import * as tf from '@tensorflow/tfjs'
import {broadcastShape, broadcastStrides, size} from './kernel-util.js'
import {COMPARE_KERNELS} from './native-compare.js'
import {LAYOUT_KERNELS} from './native-layout.js'
import {allocF32} from './native-pool.js'

/** info(): the pool, the BLAS, and where the matrix products run (native/src/addon_gemm.cc; absent from older builds). */
export interface NativeInfo {
  blas: string
  threads: number
  abi?: number
  precision?: 'fp32' | 'bf16'
  /** the path in use, as doctor says it: "onednn 2.6.3 (avx512_core_bf16)", "openblas (Haswell)", "builtin" */
  gemm?: string
  /** the instruction set it runs: oneDNN's dispatch ("avx512_core_bf16"), OpenBLAS' core ("Haswell"), or the builtin kernel's compiled one */
  gemmIsa?: string
  gemmPath?: GemmPath
  /** the paths this build has, fastest first */
  gemmPaths?: GemmPath[]
  /** oneDNN's implementation of a 256³ product per precision ("brg:avx512_core_bf16"); '' without oneDNN */
  gemmImpl?: {fp32: string; bf16: string}
  /** products (or parts) on the oneDNN path that oneDNN had no primitive for, run on the BLAS or builtin kernel */
  gemmFallbacks?: number
  /** the CPU's bf16 dot products */
  bf16?: 'amx' | 'avx512_bf16' | 'none'
  /** the fp32 → bf16 operand conversion: "avx512_bf16" (vcvtne2ps2bf16), "avx512f" or "scalar" */
  bf16Convert?: string
}

export type GemmPath = 'avx512' | 'onednn' | 'blas' | 'builtin'

/** One core's measured peak (native/src/peak.h). */
export interface NativePeak {
  ghz: number
  fmaLatency: number
  fp32PerCycle: number
  bf16PerCycle: number
  vectorBits: number
}

/** The addon's functions (native/src/addon.cc); every tensor is a TypedArray that JS allocated. */
export interface NativeAddon {
  info(): NativeInfo
  setThreads(n: number): void
  /** The matrix products' precision (native/src/gemm.h): bf16 rounds every operand to bf16, accumulates in fp32. */
  setPrecision(p: 'fp32' | 'bf16'): void
  /** Where the products run (false: not in this build); bench/gemm.mjs and the tests compare the paths. */
  setGemmPath?(p: GemmPath): boolean
  /** fp32 → bf16 bits, vectorised or (scalar) the reference loop; for the conversion's tests. */
  toBf16?(x: Float32Array, out: Uint16Array, scalar: boolean): void
  /** gemm_ld and batch_matmul with leading dimensions and beta, for their tests. */
  gemmLd?(a: Float32Array, b: Float32Array, c: Float32Array, transA: boolean, transB: boolean, M: number, N: number, K: number,
    lda: number, ldb: number, ldc: number, beta: number): void
  matmulBeta?(a: Float32Array, b: Float32Array, c: Float32Array, batchA: number, batchB: number, M: number, N: number, K: number,
    transA: boolean, transB: boolean, beta: number): void
  peak?(): NativePeak
  /** GFLOP/s of every pool thread running the peak loops at once, by wall clock (native/src/peak.h measure_peak_all). */
  peakAll?(): {fp32: number; bf16: number; threads: number}
  /** The pool's self-check (native/src/pool_check.h): `jobs` parallel_for calls, every index counted, then one run on every thread. */
  poolCheck?(jobs: number, seed: number): {jobs: number; missing: number; repeated: number; overlong: number; threadsSeen: number; allAtOnce: boolean}
  matmul(a: Float32Array, b: Float32Array, out: Float32Array, batchA: number, batchB: number, M: number, N: number, K: number, transA: boolean, transB: boolean): void
  binary(op: number, a: Float32Array, b: Float32Array, out: Float32Array, shape: number[], stridesA: number[], stridesB: number[]): void
  unary(op: number, x: Float32Array, out: Float32Array): void
  softmax(x: Float32Array, out: Float32Array, rows: number, cols: number): void
  reduce(op: number, x: Float32Array, out: Float32Array, outer: number, R: number, inner: number): void
  transpose(x: Float32Array, out: Float32Array, shape: number[], perm: number[]): void
  gather(x: Uint32Array, indices: Int32Array, out: Uint32Array, outer: number, R: number, inner: number): boolean
  scatterAdd(updates: Float32Array, offsets: Int32Array, slice: number, out: Float32Array): boolean
  dropout(x: Float32Array, out: Float32Array, keep: number, seed: number): void
  adamw(p: Float32Array, m: Float32Array, v: Float32Array, g: Float32Array, p2: Float32Array, m2: Float32Array, v2: Float32Array,
    lr: number, beta1: number, beta2: number, eps: number, decay: number, bc1: number, bc2: number, gscale: number): void
  // fused layers (native/src/fused.h, wrapped by fused.ts)
  linearForward(x: Float32Array, w: Float32Array, b: Float32Array | null, z: Float32Array, y: Float32Array, N: number, inF: number, outF: number, gelu: boolean): void
  linearBackward(dy: Float32Array, x: Float32Array, w: Float32Array, z: Float32Array | null, dz: Float32Array | null,
    dx: Float32Array, dw: Float32Array, db: Float32Array | null, N: number, inF: number, outF: number, gelu: boolean): void
  layerNormForward(x: Float32Array, g: Float32Array, b: Float32Array, y: Float32Array, mean: Float32Array, rstd: Float32Array, rows: number, H: number, eps: number): void
  layerNormBackward(dy: Float32Array, x: Float32Array, g: Float32Array, mean: Float32Array, rstd: Float32Array,
    dx: Float32Array, dg: Float32Array, db: Float32Array, rows: number, H: number): void
  crossEntropyForward(logits: Float32Array, labels: Int32Array, lse: Float32Array, N: number, C: number): number
  crossEntropyBackward(logits: Float32Array, labels: Int32Array, lse: Float32Array, dy: number, dlogits: Float32Array, N: number, C: number): void
  attentionForward(q: Float32Array, k: Float32Array, v: Float32Array, mask: Float32Array, probs: Float32Array, ctx: Float32Array,
    B: number, T: number, A: number, d: number, scale: number, keep: number, seed: number): void
  attentionBackward(dctx: Float32Array, q: Float32Array, k: Float32Array, v: Float32Array, probs: Float32Array,
    dq: Float32Array, dk: Float32Array, dv: Float32Array, B: number, T: number, A: number, d: number, scale: number, keep: number, seed: number): void
  sumSquares(xs: Float32Array[]): number
}

// Operation codes: the enums of native/src/ops.h.
const BINARY = {Add: 0, Sub: 1, Multiply: 2, RealDiv: 3, Maximum: 4, Minimum: 5, SquaredDifference: 6} as const
const UNARY = {Exp: 0, Log: 1, Erf: 2, Sqrt: 3, Rsqrt: 4, Square: 5, Neg: 6, Tanh: 7, Sigmoid: 8, Relu: 9, Abs: 10, Floor: 11, Reciprocal: 12} as const
const REDUCE = {Sum: 0, Mean: 1, Max: 2, Min: 3} as const

/** What the cpu backend hands a kernel: its tensor store and makeTensorInfo. */
interface CpuBackend {
  data: {get(id: tf.DataId): {values?: unknown}}
  makeTensorInfo(shape: number[], dtype: tf.DataType, values: Float32Array | Int32Array): tf.TensorInfo
}
interface KernelArgs {
  inputs: Record<string, tf.TensorInfo | undefined>
  backend: CpuBackend
  attrs?: Record<string, unknown>
}
/** A native kernel: its output(s), or null to let tfjs' own kernel handle the case. */
type NativeKernel = (addon: NativeAddon, args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[] | null

let enabled = true
const registered = new Set<string>()
/** Calls per kernel served natively and handed to tfjs' own kernel; ms of both when SPAN_NATIVE_PROFILE=1. */
const counts = new Map<string, {native: number; fallback: number; ms: number}>()
const timing = process.env.SPAN_NATIVE_PROFILE === '1'

/** How often each registered kernel ran natively or fell back, and its time when profiling (a copy). */
export function kernelCounts(): Record<string, {native: number; fallback: number; ms: number}> {
  return Object.fromEntries([...counts].map(([k, v]) => [k, {...v}]))
}

export function setKernelsEnabled(on: boolean): void {
  enabled = on
}

/** Whether the registered kernels serve natively (false after setKernelsEnabled(false), e.g. --backend cpu). */
export function kernelsEnabled(): boolean {
  return enabled
}


/** The float32 values of a cpu-backend tensor, or null for any other dtype or storage. */
function f32(backend: CpuBackend, t: tf.TensorInfo | undefined): Float32Array | null {
  if (!t || t.dtype !== 'float32') return null
  const v = backend.data.get(t.dataId).values
  return v instanceof Float32Array ? v : null
}

function i32(backend: CpuBackend, t: tf.TensorInfo | undefined): Int32Array | null {
  if (!t || t.dtype !== 'int32') return null
  const v = backend.data.get(t.dataId).values
  return v instanceof Int32Array ? v : null
}

/**
 * Merges output axes the operands walk identically (e.g. equal shapes become one axis),
 * drops size-1 axes; always returns rank >= 1.
 */
export function collapse(shape: number[], strides: number[][]): {shape: number[]; strides: number[][]} {
  const keep = shape.map((d, i) => i).filter((i) => shape[i] !== 1)
  const outShape: number[] = []
  const outStrides: number[][] = strides.map(() => [])
  for (const i of keep) {
    const last = outShape.length - 1
    if (last >= 0 && strides.every((s, k) => outStrides[k][last] === s[i] * shape[i])) {
      outShape[last] *= shape[i]
      strides.forEach((s, k) => (outStrides[k][last] = s[i]))
    } else {
      outShape.push(shape[i])
      strides.forEach((s, k) => outStrides[k].push(s[i]))
    }
  }
  if (outShape.length === 0) return {shape: [1], strides: strides.map(() => [1])}
  return {shape: outShape, strides: outStrides}
}

/** out = a (op) b with broadcasting, into `out` (which may alias a when shapes are equal). */
function broadcastBinary(addon: NativeAddon, op: number, a: Float32Array, aShape: number[], b: Float32Array, bShape: number[], outShape: number[], out: Float32Array): void {
  const c = collapse(outShape, [broadcastStrides(aShape, outShape.length), broadcastStrides(bShape, outShape.length)])
  addon.binary(op, a, b, out, c.shape, c.strides[0], c.strides[1])
}

/** Add, Sub, Multiply, RealDiv, Maximum, Minimum, SquaredDifference (tfjs-backend-cpu binaryKernelFunc). */
function binaryKernel(op: number): NativeKernel {
  return (addon, {inputs, backend}) => {
    const a = f32(backend, inputs.a)
    const b = f32(backend, inputs.b)
    if (!a || !b) return null
    const outShape = broadcastShape(inputs.a!.shape, inputs.b!.shape)
    if (!outShape) return null
    const out = allocF32(size(outShape))
    if (out.length > 0) broadcastBinary(addon, op, a, inputs.a!.shape, b, inputs.b!.shape, outShape, out)
    return backend.makeTensorInfo(outShape, 'float32', out)
  }
}

/** Exp, Log, Erf, Sqrt, … (tfjs-backend-cpu unaryKernelFunc), float32 only. */
function unaryKernel(op: number): NativeKernel {
  return (addon, {inputs, backend}) => {
    const x = f32(backend, inputs.x)
    if (!x) return null
    const out = allocF32(x.length)
    if (out.length > 0) addon.unary(op, x, out)
    return backend.makeTensorInfo(inputs.x!.shape, 'float32', out)
  }
}

/** Softmax over the last axis (tfjs-backend-cpu Softmax: exp(x − max) / Σ). */
const softmax: NativeKernel = (addon, {inputs, backend, attrs}) => {
  const x = f32(backend, inputs.logits)
  const shape = inputs.logits?.shape ?? []
  const dim = Number(attrs?.dim ?? -1)
  if (!x || shape.length === 0 || (dim !== -1 && dim !== shape.length - 1)) return null
  const cols = shape[shape.length - 1]
  const out = allocF32(x.length)
  if (out.length > 0) addon.softmax(x, out, x.length / cols, cols)
  return backend.makeTensorInfo(shape, 'float32', out)
}

/**
 * BatchMatMul and _FusedMatMul (tfjs-backend-cpu batchMatMul / _fusedMatMul): C = op(A)·op(B)
 * over broadcast batch axes (one side's batch may be 1), then the fused bias and a linear,
 * relu or sigmoid activation. Other activations (prelu, elu, relu6, leakyrelu) fall back.
 */
function matMulKernel(fused: boolean): NativeKernel {
  return (addon, {inputs, backend, attrs}) => {
    const {a: ta, b: tb, bias: tBias} = inputs
    const a = f32(backend, ta)
    const b = f32(backend, tb)
    if (!a || !b || ta!.shape.length < 2 || tb!.shape.length < 2) return null
    const activation = fused ? String(attrs?.activation ?? 'linear') : 'linear'
    const act = {linear: -1, relu: UNARY.Relu, sigmoid: UNARY.Sigmoid}[activation]
    if (act === undefined || (fused && inputs.preluActivationWeights)) return null
    const bias = tBias ? f32(backend, tBias) : null
    if (tBias && !bias) return null
    const out = matMulValues(addon, a, ta!.shape, b, tb!.shape, Boolean(attrs?.transposeA), Boolean(attrs?.transposeB))
    if (!out) return null
    if (bias) {
      // the bias must broadcast to the product's shape without enlarging it
      if (broadcastShape(out.shape, tBias!.shape)?.join() !== out.shape.join()) return null
      if (out.values.length > 0) broadcastBinary(addon, BINARY.Add, out.values, out.shape, bias, tBias!.shape, out.shape, out.values)
    }
    if (act >= 0 && out.values.length > 0) addon.unary(act, out.values, out.values)
    return backend.makeTensorInfo(out.shape, 'float32', out.values)
  }
}

/** The product itself; null for batch shapes the addon does not broadcast or mismatched inner sizes. */
function matMulValues(addon: NativeAddon, a: Float32Array, aShape: number[], b: Float32Array, bShape: number[], transA: boolean, transB: boolean): {shape: number[]; values: Float32Array} | null {
  const [ar, ac] = aShape.slice(-2)
  const [br, bc] = bShape.slice(-2)
  const [M, K] = transA ? [ac, ar] : [ar, ac]
  const [K2, N] = transB ? [bc, br] : [br, bc]
  if (K !== K2) return null
  const aOuter = aShape.slice(0, -2)
  const bOuter = bShape.slice(0, -2)
  const outer = broadcastShape(aOuter, bOuter)
  const batchA = size(aOuter)
  const batchB = size(bOuter)
  if (!outer || !(batchA === batchB || batchA === 1 || batchB === 1)) return null
  if (batchA === batchB && batchA !== 1 && aOuter.join() !== bOuter.join()) return null
  const shape = [...outer, M, N]
  const values = allocF32(size(shape))
  if (values.length > 0) addon.matmul(a, b, values, batchA, batchB, M, N, K, transA, transB)
  return {shape, values}
}

/** Sum, Mean, Max, Min over contiguous axes (tfjs-backend-cpu sum/mean/max/min; Max names its axes reductionIndices). */
function reduceKernel(op: number): NativeKernel {
  return (addon, {inputs, backend, attrs}) => {
    const x = f32(backend, inputs.x)
    if (!x) return null
    const shape = inputs.x!.shape
    const axes = [...new Set(tf.util.parseAxisParam((attrs?.axis ?? attrs?.reductionIndices) as number | number[], shape))].sort((p, q) => p - q)
    if (axes.length === 0 || axes.some((ax, i) => i > 0 && ax !== axes[i - 1] + 1)) return null
    const first = axes[0]
    const last = axes[axes.length - 1]
    const outer = size(shape.slice(0, first))
    const R = size(shape.slice(first, last + 1))
    const inner = size(shape.slice(last + 1))
    if (R === 0) return null
    const outShape = attrs?.keepDims ? shape.map((d, i) => (axes.includes(i) ? 1 : d)) : shape.filter((_, i) => !axes.includes(i))
    const out = allocF32(outer * inner)
    if (out.length > 0) addon.reduce(op, x, out, outer, R, inner)
    return backend.makeTensorInfo(outShape, 'float32', out)
  }
}

/**
 * ArgMax / ArgMin over the last axis (tfjs-backend-cpu argMaxImpl: the first index of the greatest value,
 * NaN never winning unless first), float32 → int32; other axes fall back to tfjs (which transposes first).
 * The pre-training step's accuracy reads the argmax of its [targets, 30522] logits: 5% of a mini step in JS.
 */
function argKernel(op: number): NativeKernel {
  return (addon, {inputs, backend, attrs}) => {
    const x = f32(backend, inputs.x)
    if (!x) return null
    const shape = inputs.x!.shape
    const axes = tf.util.parseAxisParam(attrs?.axis as number | number[], shape)
    const R = shape[shape.length - 1] ?? 0
    if (axes.length !== 1 || axes[0] !== shape.length - 1 || R === 0 || R > 2 ** 24) return null
    const rows = size(shape) / R
    const at = new Float32Array(rows) // [rows]: indices as exact floats
    if (rows > 0) addon.reduce(op, x, at, rows, R, 1)
    return backend.makeTensorInfo(shape.slice(0, -1), 'int32', Int32Array.from(at))
  }
}

/** Transpose (tfjs-backend-cpu transposeImpl), float32; axes that stay adjacent are merged first. */
const transpose: NativeKernel = (addon, {inputs, backend, attrs}) => {
  const x = f32(backend, inputs.x)
  const perm = attrs?.perm as number[] | undefined
  if (!x || !perm) return null
  const shape = inputs.x!.shape
  const outShape = perm.map((p) => shape[p])
  const out = allocF32(x.length)
  if (out.length > 0) {
    const c = collapsePerm(shape, perm)
    addon.transpose(x, out, c.shape, c.perm)
  }
  return backend.makeTensorInfo(outShape, 'float32', out)
}

/** Drops size-1 axes and merges input axes that stay consecutive in perm. */
export function collapsePerm(shape: readonly number[], perm: readonly number[]): {shape: number[]; perm: number[]} {
  const kept = perm.filter((p) => shape[p] !== 1) // input axes in output order
  const groups: number[][] = []
  for (const p of kept) {
    const g = groups[groups.length - 1]
    if (g && g[g.length - 1] + 1 === p) g.push(p)
    else groups.push([p])
  }
  if (groups.length === 0) return {shape: [1], perm: [0]}
  const byInput = [...groups].sort((g, h) => g[0] - h[0])
  const newShape = byInput.map((g) => size(g.map((p) => shape[p])))
  const newPerm = groups.map((g) => byInput.indexOf(g))
  return {shape: newShape, perm: newPerm}
}

/** GatherV2 with batchDims 0 (tfjs-backend-cpu gatherV2Impl) of float32 or int32 rows; bad indices fall back (tfjs throws). */
const gatherV2: NativeKernel = (addon, {inputs, backend, attrs}) => {
  const {x: tx, indices: ti} = inputs
  if (!tx || !ti || Number(attrs?.batchDims ?? 0) !== 0) return null
  const x = tx.dtype === 'float32' ? f32(backend, tx) : i32(backend, tx)
  const idx = i32(backend, ti)
  if (!x || !idx) return null
  const [axis] = tf.util.parseAxisParam(Number(attrs?.axis ?? 0), tx.shape)
  const outShape = [...tx.shape.slice(0, axis), ...ti.shape, ...tx.shape.slice(axis + 1)]
  const out = tx.dtype === 'float32' ? allocF32(size(outShape)) : new Int32Array(size(outShape))
  if (out.length > 0) {
    const words = (v: Float32Array | Int32Array): Uint32Array => new Uint32Array(v.buffer, v.byteOffset, v.length)
    const ok = addon.gather(words(x), idx, words(out), size(tx.shape.slice(0, axis)), tx.shape[axis], size(tx.shape.slice(axis + 1)))
    if (!ok) return null
  }
  return backend.makeTensorInfo(outShape, tx.dtype, out)
}

/** ScatterNd (tfjs-backend-cpu scatterImpl, duplicates summed) of float32 updates. */
const scatterNd: NativeKernel = (addon, {inputs, backend, attrs}) => {
  const idx = i32(backend, inputs.indices)
  const upd = f32(backend, inputs.updates)
  const shape = attrs?.shape as number[] | undefined
  if (!idx || !upd || !shape) return null
  const iShape = inputs.indices!.shape
  const k = iShape.length > 1 ? iShape[iShape.length - 1] : 1
  if (k < 1 || k > shape.length) return null
  const slice = size(shape.slice(k))
  const n = idx.length / k
  if (upd.length !== n * slice) return null
  const offsets = new Int32Array(n)
  for (let i = 0; i < n; i++) {
    let off = 0
    for (let j = 0; j < k; j++) {
      const v = idx[i * k + j]
      if (v < 0 || v >= shape[j]) return null
      off = off * shape[j] + v
    }
    offsets[i] = off * slice
  }
  const out = allocF32(size(shape))
  if (out.length > 0 && !addon.scatterAdd(upd, offsets, slice, out)) return null
  return backend.makeTensorInfo(shape, 'float32', out)
}

/**
 * SplitV (tfjs-backend-cpu splitV, which slices element by element through TensorBuffer when
 * the axis is not the first): x viewed as [outer, D, inner], each piece copied as rows of
 * d·inner contiguous floats. Plain JavaScript: TypedArray.set is a memcpy.
 */
const splitV: NativeKernel = (_addon, {inputs, backend, attrs}) => {
  const x = f32(backend, inputs.x)
  if (!x) return null
  const shape = inputs.x!.shape
  const [axis] = tf.util.parseAxisParam(Number(attrs?.axis ?? 0), shape)
  const sizes = tf.backend_util.prepareSplitSize(inputs.x!, attrs?.numOrSizeSplits as number | number[], axis)
  const outer = size(shape.slice(0, axis))
  const D = shape[axis]
  const inner = size(shape.slice(axis + 1))
  let offset = 0
  return sizes.map((d) => {
    const out = allocF32(outer * d * inner)
    for (let o = 0; o < outer; o++) {
      const from = (o * D + offset) * inner
      out.set(x.subarray(from, from + d * inner), o * d * inner)
    }
    offset += d
    return backend.makeTensorInfo(shape.map((n, i) => (i === axis ? d : n)), 'float32', out)
  })
}

/** Every kernel the addon serves, by tfjs kernel name. */
export const NATIVE_KERNELS: Record<string, NativeKernel> = {
  BatchMatMul: matMulKernel(false),
  _FusedMatMul: matMulKernel(true),
  ...Object.fromEntries(Object.entries(BINARY).map(([name, op]) => [name, binaryKernel(op)])),
  ...Object.fromEntries(Object.entries(UNARY).map(([name, op]) => [name, unaryKernel(op)])),
  ...Object.fromEntries(Object.entries(REDUCE).map(([name, op]) => [name, reduceKernel(op)])),
  ArgMax: argKernel(4), // native/src/ops.h kArgMax
  ArgMin: argKernel(5),
  Softmax: softmax,
  Transpose: transpose,
  GatherV2: gatherV2,
  ScatterNd: scatterNd,
  SplitV: splitV,
  ...LAYOUT_KERNELS, // Concat, Pack, Unpack, Slice, PadV2, Tile, OneHot (native-layout.ts)
  ...COMPARE_KERNELS, // Equal, Greater, …, Logical*, Select, Step, Cast, ZerosLike, OnesLike (native-compare.ts)
}

/**
 * Re-registers each cpu kernel with a wrapper that runs the native version and falls back to
 * tfjs' original (kept with its setup/dispose functions) when that returns null or when the
 * native kernels are switched off. Gradients are looked up by kernel name, so they still apply.
 */
export function registerKernels(addon: NativeAddon): string[] {
  for (const [name, native] of Object.entries(NATIVE_KERNELS)) {
    if (registered.has(name)) continue
    const original = tf.getKernel(name, 'cpu')
    if (!original) continue
    const count = {native: 0, fallback: 0, ms: 0}
    counts.set(name, count)
    const run = (args: KernelArgs) => {
      const out = enabled ? native(addon, args) : null
      if (out) {
        count.native++
        return out
      }
      count.fallback++
      return original.kernelFunc(args as never)
    }
    const timed = (args: KernelArgs) => {
      const t0 = performance.now()
      const out = run(args)
      count.ms += performance.now() - t0
      return out
    }
    const kernelFunc = (timing ? timed : run) as tf.KernelFunc
    tf.unregisterKernel(name, 'cpu')
    tf.registerKernel({...original, kernelFunc})
    registered.add(name)
  }
  return [...registered]
}
