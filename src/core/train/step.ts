import * as tf from '@tensorflow/tfjs'
import type {Batch} from '../model/batch.js'
import type {ForwardContext} from '../model/layers.js'
import type {ParamStore} from '../model/params.js'
import type {SpanBertForPreTraining} from '../model/pretraining.js'
import {type AdamW, clipByGlobalNorm} from './optim.js'

/** What one training step reports (plain numbers, for metrics NDJSON). */
export interface StepResult {
  loss: number
  mlm: number
  sbo: number | null
  nsp: number | null
  gradNorm: number
  lr: number
}

/**
 * The value of f and its gradients with respect to every parameter, keyed by parameter name
 * (parameters f does not reach get none). The caller disposes the gradients.
 */
export function gradsByName(params: ParamStore, f: () => tf.Scalar): {loss: number; grads: Map<string, tf.Tensor>} {
  const entries = params.entries()
  const {value, grads} = tf.variableGrads(f, entries.map(([, v]) => v))
  const loss = value.dataSync()[0]
  value.dispose()
  const byName = new Map<string, tf.Tensor>()
  for (const [name, v] of entries) if (grads[v.name]) byName.set(name, grads[v.name])
  return {loss, grads: byName}
}

/** Loss and gradients of one batch; gradients keyed by parameter name (caller disposes them). */
export function lossAndGrads(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext): {parts: number[]; grads: Map<string, tf.Tensor>} {
  const kept: tf.Tensor[] = []
  const {grads} = gradsByName(model.params, () => {
    const l = model.losses(b, ctx)
    kept.push(tf.keep(tf.stack([l.total, l.mlm, l.sbo ?? tf.scalar(NaN), l.nsp ?? tf.scalar(NaN)]))) // [4]
    return l.total
  })
  const parts = Array.from(kept[0].dataSync()) // total, mlm, sbo, nsp (NaN when off)
  tf.dispose(kept)
  return {parts, grads}
}

/**
 * One optimisation step: forward, backward, global-norm clipping, AdamW update with the
 * given learning rate. Leaves no tensors behind.
 */
export function trainStep(
  model: SpanBertForPreTraining, opt: AdamW, b: Batch, lr: number, ctx: ForwardContext, maxNorm = 1.0,
): StepResult {
  const {parts, grads} = lossAndGrads(model, b, ctx)
  try {
    const {norm: gradNorm, scale} = clipByGlobalNorm(grads, maxNorm)
    opt.apply(model.params.entries(), grads, lr, scale)
    const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x)
    return {loss: parts[0], mlm: parts[1], sbo: orNull(parts[2]), nsp: orNull(parts[3]), gradNorm, lr}
  } finally {
    tf.dispose([...grads.values()])
  }
}
