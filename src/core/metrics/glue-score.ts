/**
 * Each GLUE task's metrics and its single score, as GLUE defines them (Wang et al. 2018,
 * table 1; reference: transformers glue_compute_metrics): CoLA Matthews correlation;
 * SST-2, MNLI, QNLI, RTE, WNLI accuracy; MRPC and QQP accuracy and F1, their mean the
 * combined score; STS-B Pearson and Spearman, their mean the combined score.
 */
import {SpanError} from '../util/errors.js'
import {accuracy, f1, matthews, pearson, spearman, type Warn} from './glue.js'

/** How a task is scored. */
export type MetricKind = 'mcc' | 'acc' | 'acc_f1' | 'corr'

/** The metric values (keys as transformers' glue_compute_metrics) and `score`, the task's one number. */
export interface GlueScores {
  n: number
  score: number
  mcc?: number
  acc?: number
  f1?: number
  acc_and_f1?: number
  pearson?: number
  spearmanr?: number
  corr?: number
}

/** Which metric is the task's score, for display. */
export const SCORE_KEY: Record<MetricKind, keyof GlueScores> = {mcc: 'mcc', acc: 'acc', acc_f1: 'acc_and_f1', corr: 'corr'}

/** Classification: labels as strings (the task's label strings); `positive` is F1's class ('1'). */
export function classificationScores(kind: Exclude<MetricKind, 'corr'>, gold: readonly string[], pred: readonly string[], warn?: Warn): GlueScores {
  const n = gold.length
  if (kind === 'mcc') {
    const mcc = matthews(gold, pred, warn)
    return {n, score: mcc, mcc}
  }
  const acc = accuracy(gold, pred)
  if (kind === 'acc') return {n, score: acc, acc}
  const f = f1(gold, pred, '1', warn)
  const both = (acc + f) / 2
  return {n, score: both, acc, f1: f, acc_and_f1: both}
}

/** Regression (STS-B): Pearson, Spearman and their mean. */
export function regressionScores(gold: readonly number[], pred: readonly number[], warn?: Warn): GlueScores {
  const p = pearson(gold, pred, warn)
  const s = spearman(gold, pred, warn)
  const corr = (p + s) / 2
  return {n: gold.length, score: corr, pearson: p, spearmanr: s, corr}
}

/** Scores for a task of `kind`; labels are strings, and numbers (as strings) for regression. */
export function glueScores(kind: MetricKind, gold: readonly string[], pred: readonly string[], warn?: Warn): GlueScores {
  if (kind !== 'corr') return classificationScores(kind, gold, pred, warn)
  return regressionScores(toNumbers(gold), toNumbers(pred), warn)
}

function toNumbers(xs: readonly string[]): number[] {
  return xs.map((x) => {
    const v = Number(x)
    if (x.trim() === '' || !Number.isFinite(v)) throw new SpanError(`not a number: ${JSON.stringify(x)}`)
    return v
  })
}
