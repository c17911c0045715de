/**
 * GLUE metrics as pure functions (docs/algorithms.md#glue; the reference is
 * transformers' glue_compute_metrics over sklearn / scipy). Values are fractions in [0, 1]
 * (correlations in [-1, 1]), not percentages.
 *
 * Degenerate cases follow sklearn: a metric whose denominator is 0 is defined as 0 and a
 * warning is passed to `warn` (scipy would return nan for the correlations; we keep sklearn's 0).
 */
import {SpanError} from '../util/errors.js'

export type Warn = (message: string) => void
const silent: Warn = () => {}

function checkPaired(gold: ArrayLike<unknown>, pred: ArrayLike<unknown>, what: string): void {
  if (gold.length === 0) throw new SpanError(`${what}: no examples`)
  if (gold.length !== pred.length) throw new SpanError(`${what}: ${gold.length} gold labels but ${pred.length} predictions`)
}

/** Fraction of predictions equal to the gold label (sklearn accuracy_score). */
export function accuracy<T>(gold: readonly T[], pred: readonly T[]): number {
  checkPaired(gold, pred, 'accuracy')
  let right = 0
  for (let i = 0; i < gold.length; i++) if (gold[i] === pred[i]) right++
  return right / gold.length
}

/** Binary F1 of the positive class (sklearn f1_score, pos_label=1, as GLUE MRPC/QQP); 0 with a warning when undefined. */
export function f1<T>(gold: readonly T[], pred: readonly T[], positive: T, warn: Warn = silent): number {
  checkPaired(gold, pred, 'F1')
  let tp = 0
  let fp = 0
  let fn = 0
  for (let i = 0; i < gold.length; i++) {
    const g = gold[i] === positive
    const p = pred[i] === positive
    if (g && p) tp++
    else if (p) fp++
    else if (g) fn++
  }
  const denom = 2 * tp + fp + fn
  if (denom === 0) {
    warn('F1 is undefined (no positive gold labels and no positive predictions); set to 0')
    return 0
  }
  return (2 * tp) / denom
}

/**
 * Matthews correlation coefficient over any number of classes (sklearn matthews_corrcoef:
 * the multiclass R_K of Gorodkin 2004, the usual formula for two classes); 0 with a warning
 * when a denominator is 0 (e.g. constant predictions).
 */
export function matthews<T>(gold: readonly T[], pred: readonly T[], warn: Warn = silent): number {
  checkPaired(gold, pred, 'Matthews correlation')
  const t = new Map<T, number>() // gold count per class
  const p = new Map<T, number>() // predicted count per class
  let c = 0 // correct
  for (let i = 0; i < gold.length; i++) {
    t.set(gold[i], (t.get(gold[i]) ?? 0) + 1)
    p.set(pred[i], (p.get(pred[i]) ?? 0) + 1)
    if (gold[i] === pred[i]) c++
  }
  const s = gold.length
  let tp = 0
  for (const [k, n] of t) tp += n * (p.get(k) ?? 0)
  const covYtYp = c * s - tp
  const covYpYp = s * s - sumSquares(p.values())
  const covYtYt = s * s - sumSquares(t.values())
  if (covYpYp === 0 || covYtYt === 0) {
    warn('Matthews correlation is undefined (gold labels or predictions are constant); set to 0')
    return 0
  }
  return covYtYp / Math.sqrt(covYtYt * covYpYp)
}

function sumSquares(xs: Iterable<number>): number {
  let s = 0
  for (const x of xs) s += x * x
  return s
}

/** Pearson's r (scipy.stats.pearsonr, two-pass); 0 with a warning when a variance is 0. */
export function pearson(x: readonly number[], y: readonly number[], warn: Warn = silent): number {
  checkPaired(x, y, 'Pearson correlation')
  const mx = mean(x)
  const my = mean(y)
  let sxy = 0
  let sxx = 0
  let syy = 0
  for (let i = 0; i < x.length; i++) {
    const dx = x[i] - mx
    const dy = y[i] - my
    sxy += dx * dy
    sxx += dx * dx
    syy += dy * dy
  }
  if (sxx === 0 || syy === 0) {
    warn('correlation is undefined (gold scores or predictions are constant); set to 0')
    return 0
  }
  const r = sxy / Math.sqrt(sxx * syy)
  return Math.max(-1, Math.min(1, r)) // rounding can step just outside, as scipy clips
}

function mean(xs: readonly number[]): number {
  let s = 0
  for (const x of xs) s += x
  return s / xs.length
}

/** Spearman's rho (scipy.stats.spearmanr): Pearson's r of the ranks, ties given their average rank. */
export function spearman(x: readonly number[], y: readonly number[], warn: Warn = silent): number {
  checkPaired(x, y, 'Spearman correlation')
  return pearson(averageRanks(x), averageRanks(y), warn)
}

/** Ranks from 1, ties sharing the mean of the ranks they span (scipy.stats.rankdata 'average'). */
export function averageRanks(xs: readonly number[]): number[] {
  const order = xs.map((_, i) => i).sort((a, b) => xs[a] - xs[b] || a - b)
  const ranks = new Array<number>(xs.length)
  for (let i = 0; i < order.length; ) {
    let j = i + 1
    while (j < order.length && xs[order[j]] === xs[order[i]]) j++
    const r = (i + 1 + j) / 2 // mean of ranks i+1 .. j
    for (let k = i; k < j; k++) ranks[order[k]] = r
    i = j
  }
  return ranks
}
