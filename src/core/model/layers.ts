import * as tf from '@tensorflow/tfjs'
import {dropoutFast} from '../engine/native-ops.js'
import type {Rng} from '../data/rng.js'
import {matMulNN} from '../engine/matmul.js'
import type {ParamStore} from './params.js'

/** What a forward pass needs besides its inputs: dropout on or off, and where its randomness comes from. */
export interface ForwardContext {
  training: boolean
  /** seeds every dropout mask; required when training with dropout */
  rng: Rng | null
}

export const EVAL: ForwardContext = {training: false, rng: null}

/** nn.Linear with HF layout: y = x Wᵀ + b, W [out, in]; x [..., in] → [..., out]. */
export function linear(p: ParamStore, prefix: string, x: tf.Tensor): tf.Tensor {
  const w = p.get(`${prefix}.weight`) // [out, in]
  const b = p.get(`${prefix}.bias`) // [out]
  const lead = x.shape.slice(0, -1)
  const x2 = x.reshape([-1, x.shape[x.shape.length - 1]]) as tf.Tensor2D // [N, in]
  const y = matMulNN(x2, w.transpose()).add(b) // [N, in]·[in, out] → [N, out] (see matMulNN on why not transposeB)
  return y.reshape([...lead, w.shape[0]]) // [..., out]
}

/** LayerNorm over the last axis, epsilon inside the square root (BertLayerNorm). */
export function layerNorm(p: ParamStore, prefix: string, x: tf.Tensor, eps: number): tf.Tensor {
  const {mean, variance} = tf.moments(x, -1, true) // [..., 1] each
  const xhat = x.sub(mean).mul(tf.rsqrt(variance.add(eps))) // [..., H]
  return xhat.mul(p.get(`${prefix}.weight`)).add(p.get(`${prefix}.bias`)) // [..., H]
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
