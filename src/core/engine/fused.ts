import * as tf from '@tensorflow/tfjs'
import {f32, gradValues, i32} from './cpu-values.js'
import {nativeAddon} from './native.js'
import type {NativeAddon} from './native-kernels.js'
import {nativeActive} from './native-ops.js'
import {allocF32, releaseF32} from './native-pool.js'

/**
 * Fused layers of the `native` backend (native/src/fused.cc), each a tf.customGrad op whose
 * forward and backward are one addon call instead of a chain of kernels: nn.Linear (+ GeLU),
 * LayerNorm, multi-head self-attention, summed softmax cross-entropy, and the squared global
 * gradient norm. Each returns null where it cannot run (another backend, a dtype or storage it
 * does not take), and the caller computes the composite tfjs formula instead (src/core/model/
 * layers.ts, bert.ts, loss.ts); tests hold the two to float32 agreement.
 */

function addonIfActive(): NativeAddon | null {
  return nativeActive() ? nativeAddon() : null
}

/** How many times each fused op ran natively since the process started (for tests and profiling). */
const runs: Record<string, number> = {linear: 0, layerNorm: 0, crossEntropy: 0, attention: 0, sumSquares: 0}

export function fusedCounts(): Record<string, number> {
  return {...runs}
}

const wrap = (values: Float32Array, shape: number[]): tf.Tensor => tf.tensor(values, shape, 'float32')

/**
 * act(x·Wᵀ + b) for x [N, in], W [out, in] (nn.Linear layout), b [out]; act is identity or
 * GeLU (erf form). Gradients for x, W and b come from one linearBackward call.
 */
export function linearFused(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, act: 'linear' | 'gelu'): tf.Tensor2D | null {
  const addon = addonIfActive()
  if (!addon || !f32(x) || !f32(w) || !f32(b)) return null
  const [N, inF] = x.shape
  const outF = w.shape[0]
  const gelu = act === 'gelu'
  runs.linear++
  const op = tf.customGrad((xt, wt, bt, save) => {
    const [X, W, Bv] = [xt, wt, bt].map((t) => f32(t as tf.Tensor)!)
    const z = allocF32(N * outF) // [N, out] pre-activation
    const y = gelu ? allocF32(N * outF) : z // [N, out]
    addon.linearForward(X, W, Bv, z, y, N, inF, outF, gelu)
    const zt = gelu ? wrap(z, [N, outF]) : null
    ;(save as tf.GradSaveFunc)(zt ? [xt as tf.Tensor, wt as tf.Tensor, zt] : [xt as tf.Tensor, wt as tf.Tensor])
    return {
      value: wrap(y, [N, outF]),
      gradFunc: (dy, saved) => {
        const [sx, sw, sz] = (saved as tf.Tensor[]).map((t) => f32(t)!)
        const dz = gelu ? allocF32(N * outF) : null // scratch [N, out]
        const [dx, dw, db] = [allocF32(N * inF), allocF32(outF * inF), allocF32(outF)]
        addon.linearBackward(gradValues(dy as tf.Tensor), sx, sw, sz ?? null, dz, dx, dw, db, N, inF, outF, gelu)
        if (dz) releaseF32(dz)
        return [wrap(dx, [N, inF]), wrap(dw, [outF, inF]), wrap(db, [outF])]
      },
    }
  })
  return op(x, w, b) as tf.Tensor2D
}

/** LayerNorm over the last axis of x [..., H] with gain g [H] and bias b [H] (BertLayerNorm). */
export function layerNormFused(x: tf.Tensor, g: tf.Tensor1D, b: tf.Tensor1D, eps: number): tf.Tensor | null {
  const addon = addonIfActive()
  if (!addon || !f32(x) || !f32(g) || !f32(b) || x.rank < 1) return null
  const H = x.shape[x.rank - 1]
  const rows = H === 0 ? 0 : x.size / H
  runs.layerNorm++
  const op = tf.customGrad((xt, gt, bt, save) => {
    const [X, G, Bv] = [xt, gt, bt].map((t) => f32(t as tf.Tensor)!)
    const [y, mean, rstd] = [allocF32(x.size), allocF32(rows), allocF32(rows)]
    addon.layerNormForward(X, G, Bv, y, mean, rstd, rows, H, eps)
    ;(save as tf.GradSaveFunc)([xt as tf.Tensor, gt as tf.Tensor, wrap(mean, [rows]), wrap(rstd, [rows])])
    return {
      value: wrap(y, x.shape),
      gradFunc: (dy, saved) => {
        const [sx, sg, sm, sr] = (saved as tf.Tensor[]).map((t) => f32(t)!)
        const [dx, dg, db] = [allocF32(x.size), allocF32(H), allocF32(H)]
        addon.layerNormBackward(gradValues(dy as tf.Tensor), sx, sg, sm, sr, dx, dg, db, rows, H)
        return [wrap(dx, x.shape), wrap(dg, [H]), wrap(db, [H])]
      },
    }
  })
  return op(x, g, b)
}

/** Σ_n −log softmax(logits[n])[labels[n]] for logits [N, C], labels [N] int32 in [0, C). */
export function crossEntropySumFused(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar | null {
  const addon = addonIfActive()
  const y = addon ? i32(labels) : null
  if (!addon || !f32(logits) || !y) return null
  const [N, C] = logits.shape
  runs.crossEntropy++
  const op = tf.customGrad((lt, save) => {
    const lse = allocF32(N) // [N] log-sum-exp of each row
    const total = addon.crossEntropyForward(f32(lt as tf.Tensor)!, y, lse, N, C)
    if (Number.isNaN(total) && y.some((v) => v < 0 || v >= C)) throw new Error(`cross-entropy: a label is outside [0, ${C})`)
    ;(save as tf.GradSaveFunc)([lt as tf.Tensor, wrap(lse, [N])])
    return {
      value: tf.scalar(total, 'float32'),
      gradFunc: (dy, saved) => {
        const [sl, slse] = (saved as tf.Tensor[]).map((t) => f32(t)!)
        const d = allocF32(N * C)
        addon.crossEntropyBackward(sl, y, slse, (dy as tf.Tensor).dataSync()[0], d, N, C)
        return wrap(d, [N, C])
      },
    }
  })
  return op(logits) as tf.Scalar
}

/**
 * Multi-head self-attention after the projections: q, k, v [B, T, H] with A heads side by side,
 * maskAdd [B, T] (0 to attend, −10000 for padding) → context [B, T, H] = dropout(softmax(QKᵀ/√d
 * + mask))·V per head, heads merged back; dropout at `rate` with masks drawn from `seed` (rate 0:
 * none). Saves only the probabilities [B, A, T, T]; the dropout masks are redrawn backward.
 */
export function attentionFused(q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor3D, maskAdd: tf.Tensor2D, heads: number, rate: number, seed: number): tf.Tensor3D | null {
  const addon = addonIfActive()
  const maskValues = addon ? f32(maskAdd) : null
  if (!addon || !maskValues || !f32(q) || !f32(k) || !f32(v)) return null
  const [B, T, H] = q.shape
  const d = H / heads
  const mask = Float32Array.from(maskValues.subarray(0, B * T)) // [B, T], its own copy for the backward pass
  const [scale, keep] = [1 / Math.sqrt(d), 1 - rate]
  runs.attention++
  const op = tf.customGrad((qt, kt, vt, save) => {
    const [Q, K, V] = [qt, kt, vt].map((t) => f32(t as tf.Tensor)!)
    const [probs, ctx] = [allocF32(B * heads * T * T), allocF32(B * T * H)]
    addon.attentionForward(Q, K, V, mask, probs, ctx, B, T, heads, d, scale, keep, seed)
    ;(save as tf.GradSaveFunc)([qt as tf.Tensor, kt as tf.Tensor, vt as tf.Tensor, wrap(probs, [B, heads, T, T])])
    return {
      value: wrap(ctx, [B, T, H]),
      gradFunc: (dy, saved) => {
        const [sq, sk, sv, sp] = (saved as tf.Tensor[]).map((t) => f32(t)!)
        const [dq, dk, dv] = [allocF32(B * T * H), allocF32(B * T * H), allocF32(B * T * H)]
        addon.attentionBackward(gradValues(dy as tf.Tensor), sq, sk, sv, sp, dq, dk, dv, B, T, heads, d, scale, keep, seed)
        return [wrap(dq, [B, T, H]), wrap(dk, [B, T, H]), wrap(dv, [B, T, H])]
      },
    }
  })
  return op(q, k, v) as tf.Tensor3D
}

/** Σ x² over every tensor (the squared global norm), one addon call; null where it cannot run. */
export function sumSquaresFused(ts: tf.Tensor[]): number | null {
  const addon = addonIfActive()
  if (!addon) return null
  const values = ts.map(f32)
  if (values.some((v) => !v)) return null
  runs.sumSquares++
  return addon.sumSquares(values as Float32Array[])
}
