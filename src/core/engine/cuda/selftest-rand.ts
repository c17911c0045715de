/** Seeded uniform values in [lo, hi) for `span doctor --selftest`'s inputs (an LCG: the same on every machine and backend). */
export function selftestRand(n: number, seed: number, lo = -2, hi = 2): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo)
  })
}
