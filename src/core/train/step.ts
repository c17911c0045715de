import * as tf from '@tensorflow/tfjs'
import type {Batch} from '../model/batch.js'
import type {ForwardContext} from '../model/layers.js'
import type {ParamStore} from '../model/params.js'
import {type LossCounts, type SpanBertForPreTraining} from '../model/pretraining.js'
import {SpanError} from '../stream/errors.js'
import {onCuda} from '../engine/cuda/optimiser.js'
import {type AdamW} from './optim.js'
import {injectOverflow} from './overflow-hook.js'

/**
 * The value of f and its gradients with respect to every parameter, keyed by parameter name
 * (parameters f does not reach get none). The caller disposes the gradients.
 */
export function gradsByName(params: ParamStore, f: () => tf.Scalar): {loss: number; grads: Map<string, tf.Tensor>} {
  const {value, grads} = valueAndGrads(params, f)
  const loss = value.dataSync()[0]
  value.dispose()
  return {loss, grads}
}

/** gradsByName with the value left where it is (on the device: no read); the caller disposes both. */
export function valueAndGrads(params: ParamStore, f: () => tf.Scalar): {value: tf.Scalar; grads: Map<string, tf.Tensor>} {
  const entries = params.entries()
  const {value, grads} = tf.variableGrads(f, entries.map(([, v]) => v))
  const byName = new Map<string, tf.Tensor>()
  for (const [name, v] of entries) if (grads[v.name]) byName.set(name, grads[v.name])
  return {value, grads: byName}
}

/** Adds `more` into `acc` (gradient accumulation), disposing what it replaces. */
export function addGrads(acc: Map<string, tf.Tensor>, more: Map<string, tf.Tensor>): void {
  for (const [k, g] of more) {
    const a = acc.get(k)
    if (!a) {
      acc.set(k, g)
      continue
    }
    acc.set(k, a.add(g))
    tf.dispose([a, g])
  }
}

/** Multiplies every gradient by s in place (the mean over accumulated micro-batches). */
export function scaleGrads(grads: Map<string, tf.Tensor>, s: number): void {
  if (s === 1) return
  for (const [k, g] of grads) {
    grads.set(k, g.mul(s))
    g.dispose()
  }
}

/** What one optimisation step reports. */
export interface StepOutcome {
  losses: number[] // one per micro-batch that ran (NaN for those whose loss stayed on the device)
  gradNorm: number // before clipping (NaN when it stayed on the device)
  /**
   * A deferred step (optimiserStep's `defer` on cuda): the sum of the micro-batches' losses that
   * were not read and the squared global gradient norm, device scalars the caller reads when it
   * logs them (one transfer for both: readDeferred) and disposes.
   */
  device?: {lossSum: tf.Scalar; sumsq: tf.Scalar}
}

/** One micro-batch of a step: its loss under the gradient tape, then what to do with its value, then cleanup. */
export interface MicroBatch {
  loss: () => tf.Scalar
  /** Data-parallel: this rank's share of the micro-batch is empty, the global one is not (counted, no gradient here). */
  empty?: boolean
  done?: (loss: number) => void
  /** On a deferred step, instead of done: the loss as a device scalar (borrowed: clone it to keep it). A micro-batch with done and without doneDevice has its loss read. */
  doneDevice?: (loss: tf.Scalar) => void
  dispose?: () => void
}

/**
 * THE training step of every training path (pre-training and every fine-tuning task): the loss
 * of each micro-batch (made by the caller's closures, in order, evaluated under the gradient
 * tape), their gradients summed and divided by their number (the mean, as one batch of all
 * their examples would weigh them), clipped to a global L2 norm of `clip` (0: off; BERT,
 * SpanBERT: 1.0) as torch.nn.utils.clip_grad_norm_ does, one AdamW update with learning rate lr.
 * A closure returning null is a micro-batch without anything to learn from (skipped); with none
 * left the step makes no update. `reduce` (data-parallel) sums the gradients over ranks before
 * clipping. Leaves no tensors behind.
 * `defer` (taken on cuda only): no value comes back to the host during the step. The clipping
 * factor stays on the device (AdamW.applyClipped), the losses are summed on the device and the
 * squared norm is left there: `device` in the outcome (readDeferred). A NaN or infinite loss or
 * gradient is treated as natively: nothing checks it during the step (a NaN norm clips nothing,
 * as torch's clip_grad_norm_ without error_if_nonfinite), and it shows in the next logged record.
 */
export function optimiserStep(
  params: ParamStore,
  opt: AdamW,
  micro: (() => MicroBatch | null)[],
  lr: number,
  clip: number,
  reduce?: (grads: Map<string, tf.Tensor>) => void,
  defer = false,
): StepOutcome {
  const acc = new Map<string, tf.Tensor>()
  const run: MicroRun = {losses: [], lossSum: null}
  try {
    const scale = opt.scaler?.scale ?? null // --precision fp16: the loss times the device's loss scale
    for (const make of micro) microBatch(params, make(), acc, run, defer && onCuda(), scale)
    const {losses} = run
    if (losses.length === 0) return {losses, gradNorm: 0}
    scaleGrads(acc, 1 / losses.length)
    if (opt.scaler) injectOverflow(acc, opt.scaler.hostIter + 1) // a test hook (SPAN_TEST_OVERFLOW_STEPS); nothing otherwise
    reduce?.(acc) // data-parallel: summed over ranks before clipping (the global batch's gradient)
    const c = opt.applyClipped(params.entries(), acc, lr, clip > 0 ? clip : Infinity)
    if ('norm' in c) return {losses, gradNorm: c.norm}
    if (run.lossSum) {
      const device = {lossSum: run.lossSum, sumsq: c.sumsq}
      run.lossSum = null
      return {losses, gradNorm: NaN, device}
    }
    const sumsq = c.sumsq.dataSync()[0] // cuda, not deferred: read as before
    c.sumsq.dispose()
    return {losses, gradNorm: Math.sqrt(sumsq)}
  } finally {
    tf.dispose([...acc.values()])
    run.lossSum?.dispose()
  }
}

/** The losses of a step's micro-batches so far (NaN where deferred) and the deferred ones' sum on the device. */
interface MicroRun {
  losses: number[]
  lossSum: tf.Scalar | null
}

/** One micro-batch (null: skipped): its gradients added into acc, its loss read (or, deferred, summed on the device). */
function microBatch(params: ParamStore, m: MicroBatch | null, acc: Map<string, tf.Tensor>, run: MicroRun, onDevice: boolean, scale: tf.Tensor | null): void {
  if (!m) return
  try {
    if (m.empty) {
      run.losses.push(0)
      m.done?.(0)
      return
    }
    const r = scaledValueAndGrads(params, m.loss, scale)
    addGrads(acc, r.grads)
    if (onDevice && !(m.done && !m.doneDevice)) {
      run.losses.push(NaN)
      m.doneDevice?.(r.value)
      run.lossSum = addScalar(run.lossSum, r.value)
      return
    }
    const loss = r.value.dataSync()[0]
    r.value.dispose()
    run.losses.push(loss)
    m.done?.(loss)
  } finally {
    m.dispose?.()
  }
}

/**
 * valueAndGrads of loss × scale (dynamic loss scaling: the gradients are the scaled loss's; a device
 * tensor, so nothing is read), with the value of the loss itself; as valueAndGrads without a scale.
 */
function scaledValueAndGrads(params: ParamStore, loss: () => tf.Scalar, scale: tf.Tensor | null): {value: tf.Scalar; grads: Map<string, tf.Tensor>} {
  if (!scale) return valueAndGrads(params, loss)
  let raw: tf.Scalar | null = null
  const r = valueAndGrads(params, () => {
    raw = tf.keep(loss()) // survives the tape's cleanup: the value the caller logs
    return raw.mul(scale) as tf.Scalar
  })
  r.value.dispose()
  return {value: raw!, grads: r.grads}
}

/** sum + x (either may be null), disposing both. */
function addScalar(sum: tf.Scalar | null, x: tf.Scalar): tf.Scalar {
  if (!sum) return x
  const s = sum.add(x) as tf.Scalar
  tf.dispose([sum, x])
  return s
}

/** A deferred outcome's values in one transfer: the losses' sum and the gradient norm; disposes them. */
export function readDeferred(d: {lossSum: tf.Scalar; sumsq: tf.Scalar}): {lossSum: number; gradNorm: number} {
  const both = tf.stack([d.lossSum, d.sumsq])
  const v = both.dataSync()
  tf.dispose([both, d.lossSum, d.sumsq])
  return {lossSum: v[0], gradNorm: Math.sqrt(v[1])}
}

/**
 * The pre-training loss of one batch under the gradient tape, through the one definition of it
 * (pretrainingTerms: MLM_sum/n_mlm + SBO_sum/n_sbo + NSP mean); `onStats` receives the batch's
 * stats vector [9] (sums, hits and counts per objective) on the host.
 */
export function pretrainLoss(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext, onStats: (s: Float32Array) => void, norm?: LossCounts): () => tf.Scalar {
  return () => {
    if (model.config.objectives.includes('nsp') && !b.nextLabels) {
      throw new SpanError('the nsp objective needs examples with a "next" label (span block --pairs)')
    }
    const t = model.trainingTerms(b, ctx, norm) // pretrainingTerms' sums, big decoders in chunks
    onStats(t.stats.dataSync() as Float32Array)
    return t.total
  }
}

/** pretrainLoss with the stats vector [9] left on the device: `onStats` takes it (kept out of the tape's cleanup; the receiver disposes it). */
export function pretrainLossOnDevice(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext, onStats: (s: tf.Tensor1D) => void, norm?: LossCounts): () => tf.Scalar {
  return () => {
    if (model.config.objectives.includes('nsp') && !b.nextLabels) {
      throw new SpanError('the nsp objective needs examples with a "next" label (span block --pairs)')
    }
    const t = model.trainingTerms(b, ctx, norm)
    onStats(tf.keep(t.stats))
    return t.total
  }
}

/** What one pre-training step reports (plain numbers, for metrics NDJSON). */
export interface StepResult {
  loss: number
  mlm: number
  sbo: number | null
  nsp: number | null
  gradNorm: number
  lr: number
}

/** Loss stats and gradients of one batch, the way `span pretrain` computes them (caller disposes the gradients). */
export function lossAndGrads(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext): {parts: number[]; stats: Float32Array; grads: Map<string, tf.Tensor>} {
  let stats: Float32Array = new Float32Array(9)
  const {loss, grads} = gradsByName(model.params, pretrainLoss(model, b, ctx, (s) => (stats = s)))
  const per = (j: number) => (stats[3 * j + 2] > 0 ? stats[3 * j] / stats[3 * j + 2] : NaN)
  return {parts: [loss, per(0), per(1), per(2)], stats, grads} // total, mlm, sbo, nsp (NaN when off)
}

/**
 * One pre-training step on one batch through optimiserStep, exactly as `span pretrain` takes it
 * with --accumulate 1: forward, backward, clipping to maxNorm, AdamW. Leaves no tensors behind.
 */
export function trainStep(model: SpanBertForPreTraining, opt: AdamW, b: Batch, lr: number, ctx: ForwardContext, maxNorm = 1.0): StepResult {
  let stats: Float32Array = new Float32Array(9)
  const r = optimiserStep(model.params, opt, [() => ({loss: pretrainLoss(model, b, ctx, (s) => (stats = s))})], lr, maxNorm)
  const per = (j: number) => (stats[3 * j + 2] > 0 ? stats[3 * j] / stats[3 * j + 2] : null)
  return {loss: r.losses[0], mlm: per(0) ?? NaN, sbo: per(1), nsp: per(2), gradNorm: r.gradNorm, lr}
}
