import * as tf from '@tensorflow/tfjs'
import type {Batch} from '../model/batch.js'
import type {ForwardContext} from '../model/layers.js'
import {type SpanBertForPreTraining, pretrainingTerms} from '../model/pretraining.js'

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

/** Forward in eval mode (dropout off): the batch's stats and total, on the host. */
export function evalBatch(model: SpanBertForPreTraining, b: Batch, ctx: ForwardContext): {stats: Float32Array; total: number} {
  const [stats, total] = tf.tidy(() => {
    const t = pretrainingTerms(model.forward(b, ctx), b)
    return [t.stats, t.total]
  })
  const s = stats.dataSync() as Float32Array
  const v = total.dataSync()[0]
  tf.dispose([stats, total])
  return {stats: s, total: v}
}
