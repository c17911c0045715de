/**
 * Seeded generator for every random choice in span (docs/algorithms.md#determinism: same input and seed, same bytes).
 * xoshiro128** (Blackman & Vigna), seeded through splitmix32; its state is four uint32 words
 * that checkpoints can save and restore.
 */
export class Rng {
  private s: Uint32Array

  constructor(seed: number | Uint32Array) {
    if (typeof seed !== 'number') {
      this.s = Uint32Array.from(seed)
      return
    }
    this.s = new Uint32Array(4)
    let x = seed >>> 0
    for (let i = 0; i < 4; i++) {
      // splitmix32
      x = (x + 0x9e3779b9) >>> 0
      let z = x
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
      this.s[i] = (z ^ (z >>> 16)) >>> 0
    }
  }

  /** The next uint32. */
  next(): number {
    const s = this.s
    const result = Math.imul(rotl(Math.imul(s[1], 5), 7), 9) >>> 0
    const t = s[1] << 9
    s[2] ^= s[0]
    s[3] ^= s[1]
    s[1] ^= s[2]
    s[0] ^= s[3]
    s[2] ^= t
    s[3] = rotl(s[3], 11)
    return result
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  float(): number {
    return this.next() / 4294967296
  }

  /** Uniform integer in [0, n), n ≤ 2^32, without modulo bias. */
  int(n: number): number {
    if (n <= 0) throw new RangeError(`Rng.int(${n})`)
    const limit = 4294967296 - (4294967296 % n)
    let x = this.next()
    while (x >= limit) x = this.next()
    return x % n
  }

  /** Index drawn from a cumulative distribution (non-decreasing, last entry the total). */
  fromCdf(cdf: ArrayLike<number>): number {
    const u = this.float() * cdf[cdf.length - 1]
    let lo = 0
    let hi = cdf.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cdf[mid] > u) hi = mid
      else lo = mid + 1
    }
    return lo
  }

  state(): number[] {
    return Array.from(this.s)
  }

  static fromState(state: number[]): Rng {
    if (state.length !== 4) throw new RangeError('Rng state must be four uint32 words')
    return new Rng(Uint32Array.from(state))
  }
}

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0
}
