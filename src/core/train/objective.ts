import * as tf from '@tensorflow/tfjs'
import type {Batch} from '../model/batch.js'
import type {ForwardContext} from '../model/layers.js'
import {crossEntropySum} from '../model/loss.js'
import type {PretrainOutputs, SpanBertForPreTraining} from '../model/pretraining.js'
import {SpanError} from '../stream/errors.js'

/** Denominators of a batch's loss terms: its own counts, or a data-parallel global batch's. */
export interface LossCounts {
  mlm: number
  sbo: number
  rows: number
}

/** Sums and counts of one or more batches, per objective: what metrics and evaluation report. */
export class Tally {
  /** mlm, sbo, nsp: [summed cross-entropy, correct argmax, targets] */
  readonly sums = {mlm: [0, 0, 0], sbo: [0, 0, 0], nsp: [0, 0, 0]}
  loss = 0 // sum of per-batch totals
  batches = 0
  tokens = 0 // real (non-padding) tokens

  /** Adds one batch's STAT_LAYOUT vector. */
  add(stats: ArrayLike<number>, total: number, tokens: number): void {
    const keys = ['mlm', 'sbo', 'nsp'] as const
    keys.forEach((k, j) => {
      this.sums[k][0] += stats[3 * j]
      this.sums[k][1] += stats[3 * j + 1]
      this.sums[k][2] += stats[3 * j + 2]
    })
    this.loss += total
    this.batches++
    this.tokens += tokens
  }

  /** Mean cross-entropy per target of one objective (null without targets). */
  lossOf(k: 'mlm' | 'sbo' | 'nsp'): number | null {
    const [sum, , n] = this.sums[k]
    return n > 0 ? sum / n : null
  }

  accOf(k: 'mlm' | 'sbo' | 'nsp'): number | null {
    const [, correct, n] = this.sums[k]
    return n > 0 ? correct / n : null
  }
}

/**
 * The loss the model minimises, from its outputs: MLM_sum/n_mlm + SBO_sum/n_sbo (SPEC.md,
 * SpanBERT reference `span_bert_loss`) + NSP mean; the same terms as
 * SpanBertForPreTraining.losses (a test holds them equal), plus the argmax hits that the
 * accuracies need, in one vector so that one read brings everything to the host:
 * stats = [mlm_sum, mlm_correct, n_mlm, sbo_sum, sbo_correct, n_sbo, nsp_sum, nsp_correct, n_nsp].
 */
export function objectiveTerms(out: PretrainOutputs, b: Batch, norm?: LossCounts): {total: tf.Scalar; stats: tf.Tensor1D} {
  const zero = tf.scalar(0)
  const term = (logits: tf.Tensor2D | null, labels: tf.Tensor1D | null, n: number): tf.Scalar[] => {
    if (!logits || !labels || n === 0) return [zero, zero, tf.scalar(0)]
    const ce = crossEntropySum(logits, labels) // []
    const hits = tf.argMax(logits, -1).toInt().equal(labels).sum().toFloat() as tf.Scalar // []
    return [ce, hits, tf.scalar(n)]
  }
  const mlm = term(out.mlmLogits, b.mlmLabels, b.nMlm)
  const sbo = term(out.sboLogits, b.sboLabels, b.nSbo)
  const nsp = term(out.nspLogits, b.nextLabels, b.B)
  const n = norm ?? {mlm: b.nMlm, sbo: b.nSbo, rows: b.B} // data-parallel: the global batch's counts (issue 14)
  let total = mlm[0].div(Math.max(n.mlm, 1)) as tf.Scalar // []
  if (out.sboLogits && b.nSbo > 0) total = total.add(sbo[0].div(n.sbo))
  if (out.nspLogits && b.nextLabels) total = total.add(nsp[0].div(n.rows))
  return {total, stats: tf.stack([...mlm, ...sbo, ...nsp]) as tf.Tensor1D} // [9]
}

/** Forward in eval mode (dropout off): the batch's stats and total, on the host. */
export function evalBatch(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext): {stats: Float32Array; total: number} {
  const [stats, total] = tf.tidy(() => {
    const t = objectiveTerms(model.forward(b, ctx), b)
    return [t.stats, t.total]
  })
  const s = stats.dataSync() as Float32Array
  const v = total.dataSync()[0]
  tf.dispose([stats, total])
  return {stats: s, total: v}
}

/**
 * Loss, stats and gradients of one micro-batch (gradients keyed by parameter name; the
 * caller disposes them). The model engineer's step.ts lossAndGrads, plus the accuracy stats.
 */
export function microStep(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext, norm?: LossCounts): {stats: Float32Array; total: number; grads: Map<string, tf.Tensor>} {
  if (model.config.objectives.includes('nsp') && !b.nextLabels) {
    throw new SpanError('the nsp objective needs examples with a "next" label (span block --pairs)')
  }
  const entries = model.params.entries()
  const kept: tf.Tensor[] = []
  const {value, grads} = tf.variableGrads(() => {
    const t = objectiveTerms(model.forward(b, ctx), b, norm)
    kept.push(tf.keep(t.stats))
    return t.total
  }, entries.map(([, v]) => v))
  const stats = kept[0].dataSync() as Float32Array
  const total = value.dataSync()[0]
  tf.dispose([value, ...kept])
  const byName = new Map<string, tf.Tensor>()
  for (const [name, v] of entries) if (grads[v.name]) byName.set(name, grads[v.name])
  return {stats, total, grads: byName}
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
