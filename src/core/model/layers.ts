import * as tf from '@tensorflow/tfjs'
import type {Rng} from '../util/rng.js'
import {dropoutFused, layerNormFused, linearFused} from '../engine/fused.js'
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
 * act(x Wᵀ + b) for x [N, in], W [out, in] (nn.Linear layout), b [out] → [N, out]: one fused
 * kernel on every backend (src/core/engine/fused.ts).
 */
export function dense(x2: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, act: Activation = 'linear'): tf.Tensor2D {
  return linearFused(x2, w, b, act)
}

/** nn.Linear with HF layout (then act): y = act(x Wᵀ + b), W [out, in]; x [..., in] → [..., out]. */
export function linear(p: ParamStore, prefix: string, x: tf.Tensor, act: Activation = 'linear'): tf.Tensor {
  const w = p.get(`${prefix}.weight`) as tf.Tensor2D // [out, in]
  const b = p.get(`${prefix}.bias`) as tf.Tensor1D // [out]
  const lead = x.shape.slice(0, -1)
  const x2 = x.reshape([-1, x.shape[x.shape.length - 1]]) as tf.Tensor2D // [N, in]
  return dense(x2, w, b, act).reshape([...lead, w.shape[0]]) // [..., out]
}

/** LayerNorm over the last axis, epsilon inside the square root (BertLayerNorm); one fused kernel. */
export function layerNorm(p: ParamStore, prefix: string, x: tf.Tensor, eps: number): tf.Tensor {
  const g = p.get(`${prefix}.weight`) as tf.Tensor1D // [H]
  const b = p.get(`${prefix}.bias`) as tf.Tensor1D // [H]
  return layerNormFused(x, g, b, eps) // [..., H]
}

/** Inverted dropout with a mask seeded from the context's generator; identity when not training. */
export function dropout(x: tf.Tensor, rate: number, ctx: ForwardContext): tf.Tensor {
  if (!ctx.training || rate === 0) return x
  if (!ctx.rng) throw new Error('dropout while training needs a seeded generator')
  return dropoutFused(x, rate, ctx.rng.next()) // one seeded kernel (src/core/engine/fused.ts)
}
