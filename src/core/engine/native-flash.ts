import type * as tf from '@tensorflow/tfjs'
import type {KernelBackend} from './kernel-util.js'
import type {NativeAddon} from './native-kernels.js'
import {allocF32} from './native-pool.js'

/**
 * SpanAttention(Grad) on the native backend without the [B, A, T, T] probabilities (issue 32):
 * native/src/flash.cc, FlashAttention-2 (Dao 2023, Algorithms 1 and 2) on the CPU. The forward
 * keeps each row's log-sum-exp lse [B, A, T] as SpanAttention's second output in place of probs,
 * as the cuda backend's fused kernels do (cuda/kernels-flash-attention.ts), and the gradient
 * (fused-kernels.ts) hands it back with ctx and the mask; P is recomputed block by block.
 * SPAN_NATIVE_FLASH_ATTENTION=0 (or setNativeFlashAttention(false)) keeps the kernel that saves probs.
 */
export type FlashAddon = NativeAddon & {
  flashAttentionForward(
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    mask: Float32Array,
    lse: Float32Array,
    ctx: Float32Array,
    B: number,
    T: number,
    A: number,
    d: number,
    scale: number,
    keep: number,
    seed: number,
  ): void
  flashAttentionBackward(
    dctx: Float32Array,
    q: Float32Array,
    k: Float32Array,
    v: Float32Array,
    mask: Float32Array,
    ctx: Float32Array,
    lse: Float32Array,
    dq: Float32Array,
    dk: Float32Array,
    dv: Float32Array,
    B: number,
    T: number,
    A: number,
    d: number,
    scale: number,
    keep: number,
    seed: number,
  ): void
}

/** Attention sizes, as fused-native.ts attentionDims gives them. */
export type AttentionDims = {B: number; T: number; H: number; A: number; d: number; scale: number; keep: number; seed: number}

let enabled = process.env.SPAN_NATIVE_FLASH_ATTENTION !== '0'

/** Test and bench hook: whether native SpanAttention runs flash.cc (else fused.cc's kernel that saves probs). Returns the previous setting. */
export function setNativeFlashAttention(on: boolean): boolean {
  const was = enabled
  enabled = on
  return was
}

/** Whether native SpanAttention runs flash.cc (no [B, A, T, T] probabilities kept): the memory plan asks. */
export const nativeFlashAttention = (): boolean => enabled

/** The addon with the flash kernels when they are switched on and built (an addon older than flash.cc has none). */
export function flashAddon(addon: NativeAddon): FlashAddon | null {
  const a = addon as Partial<FlashAddon>
  return enabled && typeof a.flashAttentionForward === 'function' && typeof a.flashAttentionBackward === 'function' ? (addon as FlashAddon) : null
}

const info = (backend: KernelBackend, values: Float32Array, shape: number[]): tf.TensorInfo => backend.makeTensorInfo(shape, 'float32', values)

/** [ctx [B, T, H], lse [B, A, T]] from the float32 storage of q, k, v [B, T, H] and the additive mask [B, T]. */
export function flashForward(addon: FlashAddon, backend: KernelBackend, D: AttentionDims, [q, k, v, mask]: Float32Array[]): tf.TensorInfo[] {
  const [lse, ctx] = [allocF32(D.B * D.A * D.T), allocF32(D.B * D.T * D.H)]
  addon.flashAttentionForward(q, k, v, mask.subarray(0, D.B * D.T), lse, ctx, D.B, D.T, D.A, D.d, D.scale, D.keep, D.seed)
  return [info(backend, ctx, [D.B, D.T, D.H]), info(backend, lse, [D.B, D.A, D.T])]
}

/** [dq, dk, dv] [B, T, H] from the storage of dctx, q, k, v, mask, ctx and lse. */
export function flashBackward(addon: FlashAddon, backend: KernelBackend, D: AttentionDims, t: Float32Array[]): tf.TensorInfo[] {
  const [dy, q, k, v, mask, ctx, lse] = t
  const [dq, dk, dv] = [0, 1, 2].map(() => allocF32(D.B * D.T * D.H))
  addon.flashAttentionBackward(dy, q, k, v, mask.subarray(0, D.B * D.T), ctx, lse, dq, dk, dv, D.B, D.T, D.A, D.d, D.scale, D.keep, D.seed)
  return [dq, dk, dv].map((x) => info(backend, x, [D.B, D.T, D.H]))
}
