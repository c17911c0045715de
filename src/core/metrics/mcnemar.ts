/**
 * McNemar's test for two classifiers on the same examples (Span Fine-tuning §4.2, table 2,
 * following Zhang et al. 2020). Only the discordant pairs count: b = A right and B wrong,
 * c = A wrong and B right. Reference: statsmodels.stats.contingency_tables.mcnemar —
 * exact=True is the two-sided binomial test on b of b+c at 1/2; exact=False, correction=True
 * is the chi-square statistic (|b−c|−1)²/(b+c) with 1 degree of freedom.
 */
import {SpanError} from '../util/errors.js'

export type McNemarTest = 'exact' | 'chi2'

export interface McNemarResult {
  n: number // examples
  correctA: number
  correctB: number
  b: number // A right, B wrong
  c: number // A wrong, B right
  test: McNemarTest
  statistic: number // min(b, c) for the exact test (as statsmodels), the chi-square value otherwise
  pValue: number
}

/** The exact test below this many discordant pairs, chi-square from it on (the usual rule of thumb). */
export const EXACT_BELOW = 25

/** Counts b and c and tests them; `test` forces a test, otherwise exact when b + c < 25. */
export function mcnemar<T>(gold: readonly T[], predA: readonly T[], predB: readonly T[], test?: McNemarTest): McNemarResult {
  if (gold.length === 0) throw new SpanError("McNemar's test: no examples")
  if (predA.length !== gold.length || predB.length !== gold.length) {
    throw new SpanError(`McNemar's test: ${gold.length} gold labels, ${predA.length} and ${predB.length} predictions`)
  }
  let correctA = 0
  let correctB = 0
  let b = 0
  let c = 0
  for (let i = 0; i < gold.length; i++) {
    const ra = predA[i] === gold[i]
    const rb = predB[i] === gold[i]
    if (ra) correctA++
    if (rb) correctB++
    if (ra && !rb) b++
    else if (rb && !ra) c++
  }
  const chosen = test ?? (b + c < EXACT_BELOW ? 'exact' : 'chi2')
  const [statistic, pValue] = chosen === 'exact' ? [Math.min(b, c), exactP(b, c)] : chiSquare(b, c)
  return {n: gold.length, correctA, correctB, b, c, test: chosen, statistic, pValue}
}

/** Two-sided exact binomial p-value: min(1, 2·Σ_{i≤min(b,c)} C(n,i)/2^n), n = b + c (log space, any n). */
export function exactP(b: number, c: number): number {
  const n = b + c
  const k = Math.min(b, c)
  const ln2n = n * Math.LN2
  let logC = 0 // log C(n, 0)
  let sum = 0
  for (let i = 0; i <= k; i++) {
    if (i > 0) logC += Math.log(n - i + 1) - Math.log(i)
    sum += Math.exp(logC - ln2n)
  }
  return Math.min(1, 2 * sum)
}

/** Continuity-corrected chi-square and its p-value; no discordant pairs give statistic 0, p 1. */
export function chiSquare(b: number, c: number): [number, number] {
  if (b + c === 0) return [0, 1]
  const d = Math.abs(b - c) - 1
  const x = (d * d) / (b + c)
  return [x, chi2Sf1(x)]
}

/** Survival function of chi-square with 1 dof: P(X > x) = erfc(sqrt(x / 2)). */
export function chi2Sf1(x: number): number {
  return x <= 0 ? 1 : erfc(Math.sqrt(x / 2))
}

/**
 * The complementary error function to about 1e-15 relative: for z < 2 as 1 − erf(z) with erf's
 * all-positive series erf(z) = 2/√π·e^{−z²}·Σ 2^k z^{2k+1}/(1·3·…·(2k+1)) (Abramowitz & Stegun
 * 7.1.6); from 2 on, the continued fraction (A&S 7.1.14) evaluated by the modified Lentz method.
 */
export function erfc(z: number): number {
  if (Number.isNaN(z)) return NaN
  if (z < 0) return 2 - erfc(-z)
  if (z < 2) return 1 - erfSeries(z)
  return erfcFraction(z)
}

function erfSeries(z: number): number {
  let term = z
  let sum = z
  for (let k = 1; term > 1e-17 * sum; k++) {
    term *= (2 * z * z) / (2 * k + 1)
    sum += term
  }
  return (2 / Math.sqrt(Math.PI)) * Math.exp(-z * z) * sum
}

/** erfc(z) = e^{−z²}/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + …))))). */
function erfcFraction(z: number): number {
  const tiny = 1e-300
  let f = z
  let C = z
  let D = 0
  for (let k = 1; k < 500; k++) {
    const a = k / 2
    D = z + a * D
    D = D === 0 ? 1 / tiny : 1 / D
    C = z + a / C
    if (C === 0) C = tiny
    const delta = C * D
    f *= delta
    if (Math.abs(delta - 1) < 1e-16) break
  }
  return Math.exp(-z * z) / Math.sqrt(Math.PI) / f
}
