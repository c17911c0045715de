/**
 * TACRED's official scorer (yuhaozhang/tacred-relation, utils/scorer.py `score`, at
 * 18221efc28be400ad3ec3939f1bbd32ab74b64f5) as a pure function: micro precision, recall and F1
 * over every label except the negative one (`no_relation`; SemEval-2010 Task 8 uses `Other`).
 * As the script has it, precision is 1.0 when nothing positive was predicted, and a row counts
 * as correct only when gold and guess agree on a positive label. Goldens:
 * fixtures/tacred/golden-scorer.json (tools/make-tacred-goldens.py runs the script itself).
 */
import {cFixed} from './cformat.js'
import {maxOf} from '../util/arrays.js'

export interface RelationCounts {
  correct: Map<string, number>
  guessed: Map<string, number>
  gold: Map<string, number>
}

export interface RelationScore {
  precision: number
  recall: number
  f1: number
}

export interface RelationReport extends RelationScore {
  per_relation: Record<string, RelationScore & {gold: number}>
}

const inc = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0)

/** The counting loop of `score`: gold and prediction lists of equal length. */
export function relationCounts(gold: string[], pred: string[], negative = 'no_relation'): RelationCounts {
  if (gold.length !== pred.length)
    throw new Error(`Gold and prediction file must have same number of elements: ${gold.length} in gold vs ${pred.length} in prediction`)
  const c: RelationCounts = {correct: new Map(), guessed: new Map(), gold: new Map()}
  for (let i = 0; i < gold.length; i++) {
    const g = gold[i]
    const p = pred[i]
    if (p !== negative) inc(c.guessed, p)
    if (g !== negative) inc(c.gold, g)
    if (g !== negative && p !== negative && g === p) inc(c.correct, p)
  }
  return c
}

/** Precision 1.0 without guesses, recall 0.0 without gold, F1 0.0 when both are 0. */
function prf(correct: number, guessed: number, gold: number): RelationScore {
  const precision = guessed > 0 ? correct / guessed : 1.0
  const recall = gold > 0 ? correct / gold : 0.0
  const f1 = precision + recall > 0 ? (2.0 * precision * recall) / (precision + recall) : 0.0
  return {precision, recall, f1}
}

/** `score(key, prediction)`: the micro scores, and per gold relation (the verbose table's rows). */
export function scoreRelations(gold: string[], pred: string[], negative = 'no_relation'): RelationReport {
  const c = relationCounts(gold, pred, negative)
  const micro = prf(total(c.correct), total(c.guessed), total(c.gold))
  const perRelation: RelationReport['per_relation'] = {}
  for (const r of [...c.gold.keys()].sort(pyCompare)) {
    perRelation[r] = {...prf(c.correct.get(r) ?? 0, c.guessed.get(r) ?? 0, c.gold.get(r) ?? 0), gold: c.gold.get(r) ?? 0}
  }
  return {...micro, per_relation: perRelation}
}

/** Python's str ordering (code points; JS's default sort compares UTF-16 units). */
export function pyCompare(a: string, b: string): number {
  const A = [...a].map((ch) => ch.codePointAt(0) as number)
  const B = [...b].map((ch) => ch.codePointAt(0) as number)
  for (let i = 0; i < Math.min(A.length, B.length); i++) if (A[i] !== B[i]) return A[i] - B[i]
  return A.length - B.length
}

/** Python's `"{:.N%}".format(x)`: x×100 rounded half-even on its exact value, then `%`. */
export function pyPercent(x: number, decimals: number): string {
  return `${cFixed(x * 100, decimals)}%`
}

/** The script's stdout: the per-relation table, a blank line, then the three micro lines. */
export function relationTable(r: RelationReport): string {
  const names = Object.keys(r.per_relation)
  const width = maxOf(
    names.map((n) => [...n].length),
    0,
  )
  const pad = (x: number) => (x < 0.1 ? ' ' : '') + (x < 1.0 ? ' ' : '')
  const rows = names.map((n) => {
    const v = r.per_relation[n]
    return `${n}${' '.repeat(width - [...n].length)}  P: ${pad(v.precision)}${pyPercent(v.precision, 2)}  R: ${pad(v.recall)}${pyPercent(v.recall, 2)}  F1: ${pad(v.f1)}${pyPercent(v.f1, 2)}  #: ${v.gold}\n`
  })
  return [
    'Per-relation statistics:\n',
    ...rows,
    '\n',
    'Final Score:\n',
    `Precision (micro): ${pyPercent(r.precision, 3)}\n`,
    `   Recall (micro): ${pyPercent(r.recall, 3)}\n`,
    `       F1 (micro): ${pyPercent(r.f1, 3)}\n`,
  ].join('')
}
