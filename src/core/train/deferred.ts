import * as tf from '@tensorflow/tfjs'
import {overwrite} from '../engine/cuda/in-place.js'
import type {Tally} from './objective.js'

/**
 * The training metrics of the steps since the last logged one, kept on the device (a deferred
 * step on cuda: optimiserStep's `defer`), so that a step never waits for the device: per step
 * the micro-batches' stats vectors (the STAT_LAYOUT [9] of pretrainingTerms, summed) and the
 * step's mean loss are added into one device vector, and the last step's squared gradient norm
 * is kept beside them: acc [11]. `read` brings it back in one transfer when the step is logged.
 * On cuda acc is one block for the object's life, updated in place (in-place.ts), so a step's
 * device addresses do not depend on its place in the logging window and a graphed step replays
 * whatever --log-every is; `read(into, true)` zeroes it for the next window instead of freeing
 * it (pre-training keeps one object per run). Owns its tensors.
 */
export class DeviceMetrics {
  private acc: tf.Tensor1D | null = null // [11]: Σ stats [9], Σ_steps the step's mean loss, the last squared norm
  private step: tf.Tensor1D | null = null // [9]: this step's stats so far
  private steps = 0 // deferred steps added since the last read

  /** One micro-batch's stats vector [9] (taken: disposed here). */
  addStats(s: tf.Tensor1D): void {
    this.step = this.plus(this.step, s)
  }

  /** A deferred step that ran `n` micro-batches: their loss sum and the squared norm (taken). */
  addStep(d: {lossSum: tf.Scalar; sumsq: tf.Scalar}, n: number): void {
    const acc = this.acc
    const next = tf.tidy(() => {
      const row = tf.concat([this.step ?? tf.zeros([9]), d.lossSum.div(n).reshape([1])]) // [10]
      return tf.concat([acc ? acc.slice([0], [10]).add(row) : row, d.sumsq.reshape([1])]) as tf.Tensor1D // [11]
    })
    disposeAll([this.step, d.lossSum, d.sumsq])
    this.step = null
    this.steps++
    this.replace(next)
  }

  /**
   * Adds the stats sums and mean losses into `into` (whose batches and tokens the host counted) and
   * returns the last gradient norm (null: nothing deferred). `keep`: the buffer stays, zeroed.
   */
  read(into: Tally, keep = false): number | null {
    if (!this.acc || this.steps === 0) return keep ? null : (this.dispose(), null)
    const v = this.acc.dataSync() // the one transfer
    const keys = ['mlm', 'sbo', 'nsp'] as const
    keys.forEach((k, j) => [0, 1, 2].forEach((i) => (into.sums[k][i] += v[3 * j + i])))
    into.loss += v[9]
    this.steps = 0
    if (keep) this.replace(tf.zeros([11]))
    else this.dispose()
    return Math.sqrt(v[10])
  }

  dispose(): void {
    disposeAll([this.acc, this.step])
    this.acc = this.step = null
    this.steps = 0
  }

  /** acc ← next (taken): in place on cuda, else the tensor replaced. */
  private replace(next: tf.Tensor1D): void {
    if (this.acc && overwrite(this.acc, next)) next.dispose()
    else {
      this.acc?.dispose()
      this.acc = next
    }
  }

  /** a + b (a may be null), b taken; kept (addStats runs inside the loss's tidy: an --accumulate step's second micro-batch). */
  private plus(a: tf.Tensor1D | null, b: tf.Tensor1D): tf.Tensor1D {
    if (!a) return b
    const s = tf.keep(a.add(b)) as tf.Tensor1D
    tf.dispose([a, b])
    return s
  }
}

const disposeAll = (ts: (tf.Tensor | null)[]): void => tf.dispose(ts.filter((t): t is tf.Tensor => t !== null))
