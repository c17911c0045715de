import * as tf from '@tensorflow/tfjs'
import type {LossScaler} from '../engine/cuda/loss-scale.js'
import {clipAndAdamW, onCuda} from '../engine/cuda/optimiser.js'
import {adamwFused, sumSquaresFused} from '../engine/fused.js'
import {decays} from '../model/params.js'

export interface AdamWOptions {
  beta1: number
  beta2: number
  eps: number
  weightDecay: number
  /** per-parameter learning-rate factor (a task head's own rate, e.g. coref's --task-lr / --lr); default 1 */
  lrScale?: (name: string) => number
}

/** docs/algorithms.md#model-and-optimisation: β 0.9/0.999, ε 1e-8, decoupled weight decay 0.01. */
export const ADAMW_DEFAULTS: AdamWOptions = {beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01}

/**
 * AdamW with decoupled weight decay (Loshchilov & Hutter), as torch.optim.AdamW computes it:
 *   p ← p·(1 − lr·wd)                       (weights only: no decay on biases and LayerNorm)
 *   m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²
 *   p ← p − lr · (m/(1−β1ᵗ)) / (√(v/(1−β2ᵗ)) + ε)
 * With bias correction, like fairseq's Adam that SpanBERT trained with; BERT's TF
 * AdamWeightDecayOptimizer has none (docs/algorithms.md#model-and-optimisation; we follow torch/fairseq).
 * Moments are kept per parameter name so checkpoints can save and restore them.
 */
export class AdamW {
  readonly m = new Map<string, tf.Variable>()
  readonly v = new Map<string, tf.Variable>()
  /** updates applied so far (with a loss scaler: steps taken; the device counts the updates applied, LossScaler.read().t) */
  step = 0
  /** --precision fp16's dynamic loss scaler (cuda only: engine/cuda/loss-scale.ts); owned */
  scaler: LossScaler | null = null

  constructor(readonly opts: AdamWOptions = ADAMW_DEFAULTS) {}

  /**
   * Applies one update with learning rate lr to the gradients times gradScale (the factor
   * clipByGlobalNorm returns); grads are keyed by parameter name.
   */
  apply(params: [string, tf.Variable][], grads: Map<string, tf.Tensor>, lr: number, gradScale = 1): void {
    this.step += 1
    const {beta1, beta2, eps, weightDecay} = this.opts
    const bc1 = 1 - beta1 ** this.step
    const bc2 = 1 - beta2 ** this.step
    for (const [name, p] of params) {
      const g0 = grads.get(name)
      if (!g0) continue
      const m = this.moment(this.m, name, p)
      const v = this.moment(this.v, name, p)
      const decay = decays(name) ? weightDecay : 0
      const rate = this.opts.lrScale ? lr * this.opts.lrScale(name) : lr
      adamwFused(p, m, v, g0, {lr: rate, beta1, beta2, eps, weightDecay: decay, bc1, bc2, gradScale}) // one fused kernel (src/core/engine/fused.ts)
    }
  }

  /**
   * One step's clipping to a global L2 norm of maxNorm (Infinity: none) and update. Natively (and
   * on cpu) clipByGlobalNorm then apply, as before: the norm comes back as a number. On cuda the
   * clipping factor never leaves the device: one launch for the squared norm and the factor, one
   * for every parameter's update (src/core/engine/cuda/optimiser.ts); the squared norm comes back
   * as a device scalar the caller reads when it logs it (and disposes).
   */
  applyClipped(params: [string, tf.Variable][], grads: Map<string, tf.Tensor>, lr: number, maxNorm: number): {norm: number} | {sumsq: tf.Scalar} {
    if (!onCuda()) {
      const {norm, scale} = clipByGlobalNorm(grads, maxNorm)
      this.apply(params, grads, lr, scale)
      return {norm}
    }
    this.step += 1
    const {beta1, beta2, eps, weightDecay} = this.opts
    const h = {beta1, beta2, eps, bc1: 1 - beta1 ** this.step, bc2: 1 - beta2 ** this.step}
    const ts = params.flatMap(([name, p]) => {
      const g = grads.get(name)
      if (!g) return []
      const lrName = this.opts.lrScale ? lr * this.opts.lrScale(name) : lr
      return [{p, m: this.moment(this.m, name, p), v: this.moment(this.v, name, p), g, lr: lrName, wd: decays(name) ? weightDecay : 0}]
    })
    return {sumsq: clipAndAdamW(ts, h, maxNorm, this.scaler)}
  }

  private moment(store: Map<string, tf.Variable>, name: string, p: tf.Variable): tf.Variable {
    let s = store.get(name)
    if (!s) {
      s = tf.tidy(() => tf.variable(tf.zerosLike(p), false)) // the zeros are freed, the variable kept
      store.set(name, s)
    }
    return s
  }

  /** Replaces the state (resuming from a checkpoint); the maps take ownership of the tensors. */
  load(step: number, m: Map<string, tf.Tensor>, v: Map<string, tf.Tensor>): void {
    this.disposeMoments()
    this.step = step
    for (const [k, t] of m) this.m.set(k, tf.variable(t, false))
    for (const [k, t] of v) this.v.set(k, tf.variable(t, false))
    tf.dispose([...m.values(), ...v.values()])
  }

  dispose(): void {
    this.disposeMoments()
    this.scaler?.dispose()
    this.scaler = null
  }

  private disposeMoments(): void {
    for (const t of [...this.m.values(), ...this.v.values()]) t.dispose()
    this.m.clear()
    this.v.clear()
  }
}

/**
 * The gradients' global L2 norm and the factor torch.nn.utils.clip_grad_norm_ scales them by
 * to bring it to at most maxNorm (maxNorm/(norm + 1e-6) when that is below 1, else 1). The
 * gradients are left as they are: pass `scale` to AdamW.apply, which folds it into its pass.
 */
export function clipByGlobalNorm(grads: Map<string, tf.Tensor>, maxNorm: number): {norm: number; scale: number} {
  const all = [...grads.values()]
  const norm = Math.sqrt(sumSquaresFused(all)) // one fused kernel
  const coef = maxNorm / (norm + 1e-6)
  return {norm, scale: coef < 1 ? coef : 1}
}
