import * as tf from '@tensorflow/tfjs'
import type {Tally} from './objective.js'

/**
 * The training metrics of the steps since the last logged one, kept on the device (a deferred
 * step on cuda: optimiserStep's `defer`), so that a step never waits for the device: per step
 * the micro-batches' stats vectors (the STAT_LAYOUT [9] of pretrainingTerms, summed) and the
 * step's mean loss are added into one device vector [10]; the last step's squared gradient norm
 * is kept. `read` brings both back in one transfer when the step is logged. Owns its tensors.
 */
export class DeviceMetrics {
  private sums: tf.Tensor1D | null = null // [10]: Σ stats [9], Σ_steps the step's mean loss
  private step: tf.Tensor1D | null = null // [9]: this step's stats so far
  private sumsq: tf.Scalar | null = null

  /** One micro-batch's stats vector [9] (taken: disposed here). */
  addStats(s: tf.Tensor1D): void {
    this.step = this.plus(this.step, s)
  }

  /** A deferred step that ran `n` micro-batches: their loss sum and the squared norm (taken). */
  addStep(d: {lossSum: tf.Scalar; sumsq: tf.Scalar}, n: number): void {
    const row = tf.tidy(() => tf.concat([this.step ?? tf.zeros([9]), d.lossSum.div(n).reshape([1])]) as tf.Tensor1D)
    disposeAll([this.step, d.lossSum, this.sumsq])
    this.step = null
    this.sumsq = d.sumsq
    this.sums = this.plus(this.sums, row)
  }

  /** Adds the stats sums and mean losses into `into` (whose batches and tokens the host counted) and returns the last gradient norm (null: nothing deferred). */
  read(into: Tally): number | null {
    if (!this.sums || !this.sumsq) return null
    const [sums, sumsq] = [this.sums, this.sumsq]
    const both = tf.tidy(() => tf.concat([sums, sumsq.reshape([1])]))
    const v = both.dataSync() // the one transfer
    both.dispose()
    const keys = ['mlm', 'sbo', 'nsp'] as const
    keys.forEach((k, j) => [0, 1, 2].forEach((i) => (into.sums[k][i] += v[3 * j + i])))
    into.loss += v[9]
    this.dispose()
    return Math.sqrt(v[10])
  }

  dispose(): void {
    disposeAll([this.sums, this.step, this.sumsq])
    this.sums = this.step = this.sumsq = null
  }

  /** a + b (a may be null), b taken. */
  private plus(a: tf.Tensor1D | null, b: tf.Tensor1D): tf.Tensor1D {
    if (!a) return b
    const s = a.add(b) as tf.Tensor1D
    tf.dispose([a, b])
    return s
  }
}

const disposeAll = (ts: (tf.Tensor | null)[]): void => tf.dispose(ts.filter((t): t is tf.Tensor => t !== null))
