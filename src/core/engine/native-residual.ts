import type * as tf from '@tensorflow/tfjs'
import type {KernelArgs, KernelBackend} from './kernel-util.js'
import type {NativeAddon} from './native-kernels.js'
import {allocF32, releaseF32} from './native-pool.js'

/**
 * SpanResidualLayerNorm(Grad) on the native backend (issue 32 item 3): native/src/residual.cc, one
 * addon call each way instead of the composite's chain (SpanLinear, SpanDropout, Add, SpanLayerNorm
 * forward; SpanLayerNormGrad, SpanDropout, SpanLinearGrad backward), bit for bit the chain's values.
 * An addon older than residual.cc has neither function: the kernels decline and the composite runs;
 * SPAN_NATIVE_RESIDUAL_LAYERNORM=0 (or setNativeResidualLayerNorm(false)) runs the composite too.
 */
export type ResidualAddon = NativeAddon & {
  residualLayerNormForward(
    x: Float32Array,
    w: Float32Array,
    b: Float32Array,
    residual: Float32Array,
    g: Float32Array,
    beta: Float32Array,
    s: Float32Array,
    y: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    N: number,
    inF: number,
    H: number,
    eps: number,
    keep: number,
    seed: number,
  ): void
  residualLayerNormBackward(
    dy: Float32Array,
    x: Float32Array,
    w: Float32Array,
    g: Float32Array,
    s: Float32Array,
    mean: Float32Array,
    rstd: Float32Array,
    ds: Float32Array,
    dz: Float32Array | null,
    dx: Float32Array,
    dw: Float32Array,
    db: Float32Array,
    dg: Float32Array,
    dbeta: Float32Array,
    N: number,
    inF: number,
    H: number,
    keep: number,
    seed: number,
  ): void
}

type Kernel = (addon: NativeAddon, args: KernelArgs, f32s: (ts: (tf.TensorInfo | undefined)[]) => Float32Array[] | null) => tf.TensorInfo[] | null

let enabled = process.env.SPAN_NATIVE_RESIDUAL_LAYERNORM !== '0'

/** Test and bench hook: whether native SpanResidualLayerNorm runs residual.cc (else the composite chain). Returns the previous setting. */
export function setNativeResidualLayerNorm(on: boolean): boolean {
  const was = enabled
  enabled = on
  return was
}

/** The addon with residual.cc's functions (either pass may run either way: the outputs and saved tensors are the chain's). */
const built = (addon: NativeAddon): ResidualAddon | null =>
  typeof (addon as Partial<ResidualAddon>).residualLayerNormBackward === 'function' ? (addon as ResidualAddon) : null

/** The dropout attributes: keep = 1 − rate, or null for a rate the native dropout does not take (the composite runs). */
function keepOf(attrs: KernelArgs['attrs']): {keep: number; seed: number} | null {
  const rate = Number(attrs?.rate ?? 0)
  return rate >= 0 && rate < 1 ? {keep: 1 - rate, seed: Number(attrs?.seed ?? 0)} : null
}

const info = (backend: KernelBackend, values: Float32Array, shape: number[]): tf.TensorInfo => backend.makeTensorInfo(shape, 'float32', values)

/** SpanResidualLayerNorm: [y, s, mean, rstd] from x [N, in], w [H, in], b [H], residual [N, H], g, beta [H]. */
export const residualLayerNorm: Kernel = (addon, {inputs, backend, attrs}, f32s) => {
  const a = enabled ? built(addon) : null
  const v = f32s([inputs.x, inputs.w, inputs.b, inputs.residual, inputs.g, inputs.beta])
  const drop = keepOf(attrs)
  if (!a || !v || !drop || inputs.x!.shape.length !== 2) return null
  const [N, inF] = inputs.x!.shape
  const H = inputs.w!.shape[0]
  const [s, y, mean, rstd] = [allocF32(N * H), allocF32(N * H), allocF32(N), allocF32(N)] // [N, H], [N, H], [N], [N]
  a.residualLayerNormForward(v[0], v[1], v[2], v[3], v[4], v[5], s, y, mean, rstd, N, inF, H, Number(attrs?.eps), drop.keep, drop.seed)
  return [info(backend, y, [N, H]), info(backend, s, [N, H]), info(backend, mean, [N]), info(backend, rstd, [N])]
}

/** SpanResidualLayerNormGrad: [dx, dw, db, dresidual, dg, dbeta] from dy and the saved x, w, g, s, mean, rstd. */
export const residualLayerNormGrad: Kernel = (addon, {inputs, backend, attrs}, f32s) => {
  const a = enabled ? built(addon) : null
  const v = f32s([inputs.dy, inputs.x, inputs.w, inputs.g, inputs.s, inputs.mean, inputs.rstd])
  const drop = keepOf(attrs)
  if (!a || !v || !drop) return null
  const [N, inF] = inputs.x!.shape
  const H = inputs.w!.shape[0]
  const dz = drop.keep < 1 ? allocF32(N * H) : null // scratch [N, H]: dropout(ds)
  const [dx, dw, db, ds, dg, dbeta] = [allocF32(N * inF), allocF32(H * inF), allocF32(H), allocF32(N * H), allocF32(H), allocF32(H)]
  a.residualLayerNormBackward(v[0], v[1], v[2], v[3], v[4], v[5], v[6], ds, dz, dx, dw, db, dg, dbeta, N, inF, H, drop.keep, drop.seed)
  if (dz) releaseF32(dz)
  return [
    info(backend, dx, [N, inF]),
    info(backend, dw, [H, inF]),
    info(backend, db, [H]),
    info(backend, ds, [N, H]),
    info(backend, dg, [H]),
    info(backend, dbeta, [H]),
  ]
}
