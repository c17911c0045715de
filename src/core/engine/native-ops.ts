import * as tf from '@tensorflow/tfjs'
import {f32, gradValues} from './cpu-values.js'
import {nativeAddon} from './native.js'
import {kernelsEnabled} from './native-kernels.js'
import {allocF32, isPrivate} from './native-pool.js'

/**
 * Fused helpers for the two costs that kernels alone cannot remove on the `native` backend:
 * tf.dropout draws its mask with tf.randomUniform, which is plain JavaScript (about a fifth of
 * a tiny-model step) and keeps the mask for the backward pass, and AdamW as separate ops makes
 * ten passes over every parameter.
 * Both fall back to the tfjs ops when the native backend is not the one running.
 */

/**
 * True when the native backend is the one running: the addon is loaded, its kernels are on
 * (not --backend cpu, which turns them off) and tfjs' current backend is `cpu`.
 */
export function nativeActive(): boolean {
  return nativeAddon() !== null && kernelsEnabled() && tf.getBackend() === 'cpu'
}

/**
 * Inverted dropout, as tf.dropout(x, rate, undefined, seed): x · mask with mask = 1/(1−rate)
 * with probability 1−rate, else 0. Natively one pass each way: the mask comes from a
 * counter-based generator (SplitMix64 of seed and position), so the gradient dy · mask is
 * recomputed from the seed and no mask is kept between forward and backward. The masks differ
 * from tf.dropout's for the same seed but are just as reproducible.
 */
export function dropoutFast(x: tf.Tensor, rate: number, seed: number): tf.Tensor {
  const addon = nativeAddon()
  const xv = addon && nativeActive() && x.dtype === 'float32' && rate > 0 && rate < 1 ? f32(x) : null
  if (!addon || !xv) return tf.dropout(x, rate, undefined, seed)
  const keep = 1 - rate
  const apply = (v: Float32Array): tf.Tensor => {
    const out = allocF32(x.size)
    addon.dropout(v, out, keep, seed)
    return tf.tensor(out, x.shape, 'float32')
  }
  const op = tf.customGrad((xt) => ({
    value: apply(f32(xt as tf.Tensor)!), // same shape as x
    gradFunc: (dy) => apply(gradValues(dy as tf.Tensor)),
  }))
  return op(x)
}


export interface AdamWStep {
  lr: number
  beta1: number
  beta2: number
  eps: number
  /** decoupled weight decay for this parameter (0 for biases and LayerNorm) */
  weightDecay: number
  /** 1 − β1ᵗ and 1 − β2ᵗ */
  bc1: number
  bc2: number
  /** factor on the gradient (global-norm clipping), 1 for none */
  gradScale: number
}

interface CpuEntry {
  values?: unknown
  refCount?: number
}

/**
 * One AdamW update of a parameter and its moments in a single pass (native/src/ops.cc adamw,
 * the formula of src/core/train/optim.ts and torch.optim.AdamW). Updates p, m and v in place
 * when nothing else can see their storage (one tensor, never read out: see isPrivate), else
 * writes new buffers and assigns them. Returns false, changing nothing, where it cannot run
 * (not the native backend, not float32).
 */
export function adamwFast(p: tf.Variable, m: tf.Variable, v: tf.Variable, g: tf.Tensor, h: AdamWStep): boolean {
  const addon = nativeAddon()
  if (!addon || !nativeActive()) return false
  const data = (tf.backend() as unknown as {data: {get(id: tf.DataId): CpuEntry | undefined}}).data
  const entries = [p, m, v, g].map((t) => (t.dtype === 'float32' ? data.get(t.dataId) : undefined))
  const values = entries.map((e) => e?.values)
  if (!values.every((x) => x instanceof Float32Array && x.length === p.size)) return false
  const [pv, mv, vv, gv] = values as Float32Array[]
  const inPlace = entries.slice(0, 3).every((e) => e?.refCount === 1 && isPrivate(e.values))
  const out = inPlace ? [pv, mv, vv] : [allocF32(p.size), allocF32(p.size), allocF32(p.size)]
  addon.adamw(pv, mv, vv, gv, out[0], out[1], out[2], h.lr, h.beta1, h.beta2, h.eps, h.weightDecay, h.bc1, h.bc2, h.gradScale)
  if (inPlace) return true
  ;[p, m, v].forEach((variable, i) => {
    const t = tf.tensor(out[i], variable.shape, 'float32')
    variable.assign(t)
    t.dispose()
  })
  return true
}
