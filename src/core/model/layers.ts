import * as tf from '@tensorflow/tfjs'
import {dropoutFast} from '../engine/native-ops.js'
import type {Rng} from '../util/rng.js'
import {layerNormFused, linearFused} from '../engine/fused.js'
import {matMulNN} from '../engine/matmul.js'
import type {ParamStore} from './params.js'

/** What a forward pass needs besides its inputs: dropout on or off, and where its randomness comes from. */
export interface ForwardContext {
  training: boolean
  /** seeds every dropout mask; required when training with dropout */
  rng: Rng | null
}

export const EVAL: ForwardContext = {training: false, rng: null}

/** Activation applied by `dense`/`linear`: none, or GeLU (erf form). */
export type Activation = 'linear' | 'gelu'

/**
 * act(x Wᵀ + b) for x [N, in], W [out, in] (nn.Linear layout), b [out] → [N, out]. On the
 * native backend one fused op (linearFused); elsewhere the composite, without asking the
 * kernel to transpose (see matMulNN).
 */
export function dense(x2: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, act: Activation = 'linear'): tf.Tensor2D {
  const fused = linearFused(x2, w, b, act)
  if (fused) return fused
  const y = matMulNN(x2, w.transpose()).add(b) as tf.Tensor2D // [N, in]·[in, out] → [N, out]
  return act === 'gelu' ? (gelu(y) as tf.Tensor2D) : y
}

/** nn.Linear with HF layout (then act): y = act(x Wᵀ + b), W [out, in]; x [..., in] → [..., out]. */
export function linear(p: ParamStore, prefix: string, x: tf.Tensor, act: Activation = 'linear'): tf.Tensor {
  const w = p.get(`${prefix}.weight`) as tf.Tensor2D // [out, in]
  const b = p.get(`${prefix}.bias`) as tf.Tensor1D // [out]
  const lead = x.shape.slice(0, -1)
  const x2 = x.reshape([-1, x.shape[x.shape.length - 1]]) as tf.Tensor2D // [N, in]
  return dense(x2, w, b, act).reshape([...lead, w.shape[0]]) // [..., out]
}

/** LayerNorm over the last axis, epsilon inside the square root (BertLayerNorm); fused on native. */
export function layerNorm(p: ParamStore, prefix: string, x: tf.Tensor, eps: number): tf.Tensor {
  const g = p.get(`${prefix}.weight`) as tf.Tensor1D // [H]
  const b = p.get(`${prefix}.bias`) as tf.Tensor1D // [H]
  const fused = layerNormFused(x, g, b, eps)
  if (fused) return fused
  const {mean, variance} = tf.moments(x, -1, true) // [..., 1] each
  const xhat = x.sub(mean).mul(tf.rsqrt(variance.add(eps))) // [..., H]
  return xhat.mul(g).add(b) // [..., H]
}

/** GeLU, erf form (BERT modeling.py `gelu`): x · ½(1 + erf(x/√2)). */
export function gelu(x: tf.Tensor): tf.Tensor {
  return x.mul(tf.erf(x.mul(Math.SQRT1_2)).add(1).mul(0.5)) // same shape as x
}

/** Inverted dropout with a mask seeded from the context's generator; identity when not training. */
export function dropout(x: tf.Tensor, rate: number, ctx: ForwardContext): tf.Tensor {
  if (!ctx.training || rate === 0) return x
  if (!ctx.rng) throw new Error('dropout while training needs a seeded generator')
  return dropoutFast(x, rate, ctx.rng.next()) // tf.dropout except on the native backend (same seeding)
}
