/**
 * Linear warm-up then linear decay to zero (BERT §A.2, SpanBERT §4.2; the shape of HF
 * `get_linear_schedule_with_warmup`). Steps count updates from 1: update t uses
 * peak·t/warmup while t ≤ warmup, then peak·(total−t)/(total−warmup), never below 0.
 * (HF's LambdaLR evaluates its factor at t−1, so its first update has rate 0; ours does not.)
 */
export class LinearSchedule {
  constructor(readonly peak: number, readonly warmup: number, readonly total: number) {
    if (!(peak >= 0)) throw new RangeError(`learning rate must be ≥ 0, got ${peak}`)
    if (!Number.isInteger(warmup) || warmup < 0) throw new RangeError(`warm-up must be an integer ≥ 0, got ${warmup}`)
    if (!Number.isInteger(total) || total < 1) throw new RangeError(`total steps must be an integer ≥ 1, got ${total}`)
  }

  /** The learning rate of update t (t = 1, 2, …). */
  at(t: number): number {
    if (t <= this.warmup) return (this.peak * t) / this.warmup
    if (this.total <= this.warmup) return this.peak
    return Math.max(0, (this.peak * (this.total - t)) / (this.total - this.warmup))
  }
}
