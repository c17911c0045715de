import type * as tf from '@tensorflow/tfjs'
import type {KernelArgs, KernelBackend} from './kernel-util.js'
import type {NativeAddon} from './native-kernels.js'
import {type FlashAddon, flashAddon, flashBackward, flashForward} from './native-flash.js'
import {allocF32, isPrivate} from './native-pool.js'
import {residualLayerNorm, residualLayerNormGrad} from './native-residual.js'

/**
 * The fused kernels of the `native` backend (native/src/fused.cc, ops.cc): each reads its
 * inputs' storage on tfjs' cpu backend and makes its outputs with one addon call. Each
 * returns null where it cannot run (a dtype or storage it does not take), and the kernel
 * registered for `cpu` (fused-kernels.ts) runs the composite formula instead.
 */
export type NativeFusedKernel = (addon: NativeAddon, args: KernelArgs) => tf.TensorInfo | tf.TensorInfo[] | null

/** How many times each fused op ran natively since the process started (for tests and profiling). */
export const nativeRuns: Record<string, number> = {
  linear: 0,
  layerNorm: 0,
  crossEntropy: 0,
  attention: 0,
  sumSquares: 0,
  dropout: 0,
  adamw: 0,
  residualLayerNorm: 0,
}

/** The float32 storage of each input, or null when any is missing or stored otherwise. */
function f32s(backend: KernelBackend, ts: (tf.TensorInfo | undefined)[]): Float32Array[] | null {
  const out: Float32Array[] = []
  for (const t of ts) {
    const v = t && t.dtype === 'float32' ? backend.data.get(t.dataId).values : null
    if (!(v instanceof Float32Array)) return null
    out.push(v)
  }
  return out
}

const info = (backend: KernelBackend, values: Float32Array, shape: number[]): tf.TensorInfo => backend.makeTensorInfo(shape, 'float32', values)

/** SpanLinear: [y, z] for x [N, in], w [out, in], b [out]; z [N, out] only for GeLU, else [0]. */
const linear: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const v = f32s(backend, [inputs.x, inputs.w, inputs.b])
  if (!v) return null
  const [N, inF] = inputs.x!.shape
  const outF = inputs.w!.shape[0]
  const gelu = attrs?.activation === 'gelu'
  const z = allocF32(N * outF) // [N, out] pre-activation
  const y = gelu ? allocF32(N * outF) : z // [N, out]
  addon.linearForward(v[0], v[1], v[2], z, y, N, inF, outF, gelu)
  nativeRuns.linear++
  return [info(backend, y, [N, outF]), gelu ? info(backend, z, [N, outF]) : info(backend, allocF32(0), [0])]
}

/** SpanLinearGrad: [dx, dw, db] from dy, x, w and (GeLU) z. */
const linearGrad: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const gelu = attrs?.activation === 'gelu'
  const v = f32s(backend, [inputs.dy, inputs.x, inputs.w, inputs.z])
  if (!v) return null
  const [N, inF] = inputs.x!.shape
  const outF = inputs.w!.shape[0]
  const dz = gelu ? allocF32(N * outF) : null // scratch [N, out]
  const [dx, dw, db] = [allocF32(N * inF), allocF32(outF * inF), allocF32(outF)]
  addon.linearBackward(v[0], v[1], v[2], gelu ? v[3] : null, dz, dx, dw, db, N, inF, outF, gelu)
  return [info(backend, dx, [N, inF]), info(backend, dw, [outF, inF]), info(backend, db, [outF])]
}

/** SpanLayerNorm: [y, mean [rows], rstd [rows]] over the last axis of x. */
const layerNorm: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const v = f32s(backend, [inputs.x, inputs.g, inputs.b])
  const shape = inputs.x?.shape ?? []
  if (!v || shape.length < 1) return null
  const H = shape[shape.length - 1]
  const rows = H === 0 ? 0 : v[0].length / H
  const [y, mean, rstd] = [allocF32(v[0].length), allocF32(rows), allocF32(rows)]
  addon.layerNormForward(v[0], v[1], v[2], y, mean, rstd, rows, H, Number(attrs?.eps))
  nativeRuns.layerNorm++
  return [info(backend, y, shape), info(backend, mean, [rows]), info(backend, rstd, [rows])]
}

/** SpanLayerNormGrad: [dx, dg, db] from dy, x, g, mean, rstd. */
const layerNormGrad: NativeFusedKernel = (addon, {inputs, backend}) => {
  const v = f32s(backend, [inputs.dy, inputs.x, inputs.g, inputs.mean, inputs.rstd])
  if (!v) return null
  const shape = inputs.x!.shape
  const H = shape[shape.length - 1]
  const rows = v[3].length
  const [dx, dg, db] = [allocF32(v[1].length), allocF32(H), allocF32(H)]
  addon.layerNormBackward(v[0], v[1], v[2], v[3], v[4], dx, dg, db, rows, H)
  return [info(backend, dx, shape), info(backend, dg, [H]), info(backend, db, [H])]
}

/** SpanCrossEntropy: [Σ −log softmax(logits)[label], lse [N]]; a label outside [0, C) throws. */
const crossEntropy: NativeFusedKernel = (addon, {inputs, backend}) => {
  const v = f32s(backend, [inputs.logits])
  const y = inputs.labels?.dtype === 'int32' ? backend.data.get(inputs.labels.dataId).values : null
  if (!v || !(y instanceof Int32Array)) return null
  const [N, C] = inputs.logits!.shape
  const lse = allocF32(N) // [N] log-sum-exp of each row
  const total = addon.crossEntropyForward(v[0], y, lse, N, C)
  if (Number.isNaN(total) && y.some((l) => l < 0 || l >= C)) throw new Error(`cross-entropy: a label is outside [0, ${C})`)
  nativeRuns.crossEntropy++
  const loss = allocF32(1)
  loss[0] = total
  return [info(backend, loss, []), info(backend, lse, [N])]
}

/** SpanCrossEntropyGrad: dlogits [N, C] from dy [], logits, labels, lse. */
const crossEntropyGrad: NativeFusedKernel = (addon, {inputs, backend}) => {
  const v = f32s(backend, [inputs.dy, inputs.logits, inputs.lse])
  const y = inputs.labels?.dtype === 'int32' ? backend.data.get(inputs.labels.dataId).values : null
  if (!v || !(y instanceof Int32Array)) return null
  const [N, C] = inputs.logits!.shape
  const d = allocF32(N * C)
  addon.crossEntropyBackward(v[1], y, v[2], v[0][0], d, N, C)
  return info(backend, d, [N, C])
}

/** Attention sizes from q [B, T, H] and the head count. */
function attentionDims(q: tf.TensorInfo, attrs: Record<string, unknown> | undefined) {
  const [B, T, H] = q.shape
  const A = Number(attrs?.heads)
  const d = H / A
  const rate = Number(attrs?.rate ?? 0)
  return {B, T, H, A, d, scale: 1 / Math.sqrt(d), keep: 1 - rate, seed: Number(attrs?.seed ?? 0)}
}

/** SpanAttention: [ctx [B, T, H], lse [B, A, T]] (flash, native-flash.ts) or [ctx, probs [B, A, T, T]], from q, k, v [B, T, H] and mask [B, T]. */
const attention: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const v = f32s(backend, [inputs.q, inputs.k, inputs.v, inputs.mask])
  if (!v) return null
  const D = attentionDims(inputs.q!, attrs)
  const flash = flashAddon(addon)
  nativeRuns.attention++
  if (flash) return flashForward(flash, backend, D, v)
  const {B, T, H, A, d, scale, keep, seed} = D
  const [probs, ctx] = [allocF32(B * A * T * T), allocF32(B * T * H)]
  addon.attentionForward(v[0], v[1], v[2], v[3].subarray(0, B * T), probs, ctx, B, T, A, d, scale, keep, seed)
  return [info(backend, ctx, [B, T, H]), info(backend, probs, [B, A, T, T])]
}

/**
 * SpanAttentionGrad: [dq, dk, dv] from dy, q, k, v and the saved probabilities [B, A, T, T], or
 * (flash, native-flash.ts) the row lse [B, A, T] with ctx and the mask; dropout masks redrawn from the seed.
 */
const attentionGrad: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  if (inputs.probs?.shape.length === 3) {
    const t = f32s(backend, [inputs.dy, inputs.q, inputs.k, inputs.v, inputs.mask, inputs.ctx, inputs.probs])
    const built = typeof (addon as Partial<FlashAddon>).flashAttentionBackward === 'function' // whatever the switch says now: the forward ran flash
    return t && built ? flashBackward(addon as FlashAddon, backend, attentionDims(inputs.q!, attrs), t) : null
  }
  const v = f32s(backend, [inputs.dy, inputs.q, inputs.k, inputs.v, inputs.probs])
  if (!v) return null
  const {B, T, H, A, d, scale, keep, seed} = attentionDims(inputs.q!, attrs)
  const [dq, dk, dv] = [allocF32(B * T * H), allocF32(B * T * H), allocF32(B * T * H)]
  addon.attentionBackward(v[0], v[1], v[2], v[3], v[4], dq, dk, dv, B, T, A, d, scale, keep, seed)
  return [info(backend, dq, [B, T, H]), info(backend, dk, [B, T, H]), info(backend, dv, [B, T, H])]
}

/** SpanDropout: x · mask from a counter-based generator of (seed, position); its own gradient. */
const dropout: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const v = f32s(backend, [inputs.x])
  const rate = Number(attrs?.rate)
  if (!v || !(rate > 0 && rate < 1)) return null
  const out = allocF32(v[0].length)
  addon.dropout(v[0], out, 1 - rate, Number(attrs?.seed))
  nativeRuns.dropout++
  return info(backend, out, inputs.x!.shape)
}

/** SpanSumSquares: Σ x² over every input, a float32 scalar. */
const sumSquares: NativeFusedKernel = (addon, {inputs, backend}) => {
  const v = f32s(backend, Object.values(inputs))
  if (!v) return null
  const out = allocF32(1)
  out[0] = addon.sumSquares(v)
  nativeRuns.sumSquares++
  return info(backend, out, [])
}

/**
 * SpanAdamW: [p′, m′, v′]. Where p, m and v are each one tensor's storage that nobody has read
 * out (isPrivate, refcount 1), updated in place and returned as aliases of the inputs (the op
 * then has nothing to assign); else written to new buffers.
 */
const adamw: NativeFusedKernel = (addon, {inputs, backend, attrs}) => {
  const ts = [inputs.p, inputs.m, inputs.v, inputs.g]
  const v = f32s(backend, ts)
  const n = v?.[0].length ?? 0
  if (!v || !v.every((x) => x.length === n)) return null
  const entries = ts.slice(0, 3).map((t) => backend.data.get(t!.dataId) as {values?: unknown; refCount?: number})
  const inPlace = entries.every((e) => e.refCount === 1 && isPrivate(e.values))
  const out = inPlace ? v.slice(0, 3) : [allocF32(n), allocF32(n), allocF32(n)]
  const h = attrs as Record<string, number>
  addon.adamw(v[0], v[1], v[2], v[3], out[0], out[1], out[2], h.lr, h.beta1, h.beta2, h.eps, h.weightDecay, h.bc1, h.bc2, h.gradScale)
  nativeRuns.adamw++
  const shape = inputs.p!.shape
  if (!inPlace) return out.map((o) => info(backend, o, shape))
  return ts.slice(0, 3).map((t) => {
    ;(backend as unknown as {incRef(id: tf.DataId): void}).incRef(t!.dataId)
    return {dataId: t!.dataId, shape, dtype: 'float32'}
  })
}

/** The native implementation of each fused kernel, by kernel name (fused-kernels.ts FUSED). */
export const NATIVE_FUSED: Record<string, NativeFusedKernel> = {
  SpanLinear: linear,
  SpanLinearGrad: linearGrad,
  SpanLayerNorm: layerNorm,
  SpanLayerNormGrad: layerNormGrad,
  SpanCrossEntropy: crossEntropy,
  SpanCrossEntropyGrad: crossEntropyGrad,
  SpanAttention: attention,
  SpanAttentionGrad: attentionGrad,
  SpanDropout: dropout,
  SpanSumSquares: sumSquares,
  SpanAdamW: adamw,
  SpanResidualLayerNorm: (addon, args) => {
    const out = residualLayerNorm(addon, args, (ts) => f32s(args.backend, ts))
    if (out) nativeRuns.residualLayerNorm++
    return out
  },
  SpanResidualLayerNormGrad: (addon, args) => residualLayerNormGrad(addon, args, (ts) => f32s(args.backend, ts)),
}
