/** The readable and JSON forms of `span eval glue` and `span eval compare`. */
import {SCORE_KEY, type GlueScores} from '../../metrics/glue-score.js'
import type {Comparison} from './evaluate.js'
import type {GlueTask} from './tasks.js'
import {maxOf} from '../../util/arrays.js'

const METRIC_KEYS = ['mcc', 'acc', 'f1', 'acc_and_f1', 'pearson', 'spearmanr', 'corr'] as const

/** One JSON object: task, n, the metrics (fractions, as glue_compute_metrics) and score. */
export function scoresJson(task: GlueTask, s: GlueScores): string {
  const out: Record<string, unknown> = {task: task.name, n: s.n}
  for (const k of METRIC_KEYS) if (s[k] !== undefined) out[k] = s[k]
  out.score = s.score
  return JSON.stringify(out)
}

/** A small aligned table; values with 4 decimals. */
export function scoresTable(task: GlueTask, s: GlueScores, gold: string, pred: string): string {
  const rows: [string, string][] = [
    ['task', task.name],
    ['gold', gold],
    ['predictions', pred],
    ['examples', String(s.n)],
  ]
  for (const k of METRIC_KEYS) if (s[k] !== undefined) rows.push([k, (s[k] as number).toFixed(4)])
  rows.push(['score', `${s.score.toFixed(4)}  (${SCORE_KEY[task.metric]})`])
  return table(rows)
}

/** A comparison of any task (`unit`: what n counts, when not GLUE's examples). */
type AnyComparison = Comparison & {unit?: string}

export function comparisonJson(task: {name: string}, c: AnyComparison): string {
  const m = c.mcnemar
  return JSON.stringify({
    task: task.name,
    n: m.n,
    ...(c.unit ? {unit: c.unit} : {}),
    acc_a: c.accA,
    acc_b: c.accB,
    b: m.b,
    c: m.c,
    test: m.test,
    statistic: m.statistic,
    p_value: m.pValue,
  })
}

export function comparisonTable(task: {name: string}, c: AnyComparison, a: string, b: string): string {
  const m = c.mcnemar
  const test = m.test === 'exact' ? `exact binomial, two-sided (b + c = ${m.b + m.c})` : `chi-square, 1 dof, continuity-corrected: ${m.statistic.toFixed(4)}`
  return table([
    ['task', `${task.name}, ${m.n} ${c.unit ?? 'example'}s`],
    ['A', `${a}  acc ${c.accA.toFixed(4)}`],
    ['B', `${b}  acc ${c.accB.toFixed(4)}`],
    ['b', `${m.b}  (A right, B wrong)`],
    ['c', `${m.c}  (A wrong, B right)`],
    ['test', `McNemar, ${test}`],
    ['p-value', formatP(m.pValue)],
  ])
}

/** Four significant digits, scientific below 1e-4. */
export function formatP(p: number): string {
  return p >= 1e-4 || p === 0 ? String(Number(p.toPrecision(4))) : p.toExponential(3)
}

function table(rows: [string, string][]): string {
  const w = maxOf(rows.map(([k]) => k.length))
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${v}`).join('\n') + '\n'
}
