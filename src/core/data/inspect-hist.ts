/** One bar of a length histogram: values in [from, to], both inclusive. */
export interface Bin {
  from: number
  to: number
  count: number
}

/**
 * Counts of non-negative integers (lengths). Memory grows with the number of distinct values,
 * not with the number of values added, so a stream of any size is summarised exactly:
 * quantiles come from the counts rather than from a stored list.
 */
export class IntHistogram {
  private readonly counts = new Map<number, number>()
  count = 0
  sum = 0
  min: number | null = null
  max: number | null = null

  add(value: number, times = 1): void {
    if (times <= 0) return
    this.counts.set(value, (this.counts.get(value) ?? 0) + times)
    this.count += times
    this.sum += value * times
    if (this.min === null || value < this.min) this.min = value
    if (this.max === null || value > this.max) this.max = value
  }

  /** How many values equal `value`. */
  get(value: number): number {
    return this.counts.get(value) ?? 0
  }

  mean(): number | null {
    return this.count === 0 ? null : this.sum / this.count
  }

  /** [value, count] pairs by increasing value. */
  entries(): Array<[number, number]> {
    return [...this.counts.entries()].sort((a, b) => a[0] - b[0])
  }

  /** Nearest-rank quantile: the smallest value v such that at least ceil(q·count) values are ≤ v. */
  quantile(q: number): number | null {
    if (this.count === 0) return null
    const rank = Math.max(1, Math.ceil(q * this.count))
    let seen = 0
    for (const [value, n] of this.entries()) {
      seen += n
      if (seen >= rank) return value
    }
    return this.max
  }

  /** At most `k` equal-width integer bins from min to max (one bin when all values are equal). */
  bins(k: number): Bin[] {
    if (this.min === null || this.max === null) return []
    const width = Math.max(1, Math.ceil((this.max - this.min + 1) / k))
    const out: Bin[] = []
    for (let from = this.min; from <= this.max; from += width) out.push({from, to: Math.min(from + width - 1, this.max), count: 0})
    for (const [value, n] of this.counts) out[Math.floor((value - this.min) / width)].count += n
    return out
  }
}
