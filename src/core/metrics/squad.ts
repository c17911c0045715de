/**
 * The official SQuAD scorers as pure functions: evaluate-v1.1.py (`evaluate`) and
 * evaluate-v2.0.py (`main` without file handling). Function names in comments are the
 * official scripts'. Numbers agree with them to 1e-9 (fixtures/squad/golden-*.json).
 *
 * One deliberate extension: a question without a prediction is scored as wrong. v1.1 does
 * this itself ("will receive score 0"); v2.0 would drop it from `total` and then crash on
 * the HasAns/NoAns breakdown, so here it counts 0 at every no-answer threshold.
 */
import {normalizeAnswer, pySplit} from './squad-normalize.js'

export {normalizeAnswer} from './squad-normalize.js'

/** A gold question: its id and answer texts, in dataset order (v2.0: [] when unanswerable). */
export interface GoldQuestion {
  id: string
  answers: string[]
}

/** evaluate-v1.1.py's result. */
export interface SquadV1Result {
  exact_match: number
  f1: number
}

/** evaluate-v2.0.py's result, keys in the order the script prints them. */
export type SquadV2Result = Record<string, number>

/** v1.1 f1_score: bag-of-tokens F1 of the normalised texts (0 when nothing is shared). */
export function f1ScoreV1(prediction: string, groundTruth: string): number {
  const pred = pySplit(normalizeAnswer(prediction))
  const gold = pySplit(normalizeAnswer(groundTruth))
  const same = commonCount(pred, gold)
  if (same === 0) return 0
  return harmonic(same, pred.length, gold.length)
}

/** v1.1 exact_match_score. */
export function exactMatchV1(prediction: string, groundTruth: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(groundTruth) ? 1 : 0
}

/** v2.0 get_tokens: [] for the empty string, else the normalised words. */
function getTokens(s: string): string[] {
  return s ? pySplit(normalizeAnswer(s)) : []
}

/** v2.0 compute_exact. */
export function computeExact(gold: string, pred: string): number {
  return normalizeAnswer(gold) === normalizeAnswer(pred) ? 1 : 0
}

/** v2.0 compute_f1: like v1.1, but 1 when both sides are empty (no-answer agreement). */
export function computeF1(gold: string, pred: string): number {
  const goldToks = getTokens(gold)
  const predToks = getTokens(pred)
  const same = commonCount(goldToks, predToks)
  if (goldToks.length === 0 || predToks.length === 0) return goldToks.length === predToks.length ? 1 : 0
  if (same === 0) return 0
  return harmonic(same, predToks.length, goldToks.length)
}

/** sum((Counter(a) & Counter(b)).values()) */
function commonCount(a: string[], b: string[]): number {
  const counts = new Map<string, number>()
  for (const t of a) counts.set(t, (counts.get(t) ?? 0) + 1)
  let same = 0
  for (const t of b) {
    const c = counts.get(t) ?? 0
    if (c > 0) {
      same++
      counts.set(t, c - 1)
    }
  }
  return same
}

function harmonic(same: number, predLen: number, goldLen: number): number {
  const precision = (1.0 * same) / predLen
  const recall = (1.0 * same) / goldLen
  return (2 * precision * recall) / (precision + recall)
}

/** metric_max_over_ground_truths; a question without gold answers is an error (Python's max([])). */
function maxOver(id: string, golds: string[], score: (gold: string) => number): number {
  if (golds.length === 0) throw new Error(`question ${id} has no gold answers`)
  let best = -Infinity
  for (const g of golds) best = Math.max(best, score(g))
  return best
}

/** evaluate-v1.1.py evaluate(): every question counts in `total`; a missing prediction scores 0. */
export function evaluateV1(questions: GoldQuestion[], predictions: Map<string, string>): SquadV1Result {
  let exact = 0
  let f1 = 0
  for (const qa of questions) {
    const pred = predictions.get(qa.id)
    if (pred === undefined) continue
    exact += maxOver(qa.id, qa.answers, (g) => exactMatchV1(pred, g))
    f1 += maxOver(qa.id, qa.answers, (g) => f1ScoreV1(pred, g))
  }
  const total = questions.length
  if (total === 0) throw new Error('no questions to score')
  return {exact_match: (100.0 * exact) / total, f1: (100.0 * f1) / total}
}

/** Options of evaluate-v2.0.py: --na-prob-file (a map in file order) and --na-prob-thresh. */
export interface SquadV2Options {
  naProbs?: Map<string, number>
  naProbThresh?: number
}

/** Per-question raw scores, keyed like Python dicts (a repeated id keeps its first place). */
interface RawScores {
  hasAns: Map<string, boolean>
  exact: Map<string, number>
  f1: Map<string, number>
}

/** make_qid_to_has_ans + get_raw_scores; a missing prediction scores 0 (see the file comment). */
function getRawScores(questions: GoldQuestion[], preds: Map<string, string>): RawScores {
  const raw: RawScores = {hasAns: new Map(), exact: new Map(), f1: new Map()}
  for (const qa of questions) {
    raw.hasAns.set(qa.id, qa.answers.length > 0)
    const golds = qa.answers.filter((a) => normalizeAnswer(a) !== '')
    if (golds.length === 0) golds.push('') // unanswerable: only '' is right
    const pred = preds.get(qa.id)
    raw.exact.set(qa.id, pred === undefined ? 0 : maxOver(qa.id, golds, (g) => computeExact(g, pred)))
    raw.f1.set(qa.id, pred === undefined ? 0 : maxOver(qa.id, golds, (g) => computeF1(g, pred)))
  }
  return raw
}

/** apply_no_ans_threshold: a question predicted unanswerable scores 1 iff it is. */
function applyNoAnsThreshold(scores: Map<string, number>, raw: RawScores, naProbs: Map<string, number>, thresh: number, preds: Map<string, string>): Map<string, number> {
  const out = new Map<string, number>()
  for (const [qid, s] of scores) {
    const p = naProbs.get(qid)
    const predNa = preds.has(qid) && p !== undefined && p > thresh
    out.set(qid, predNa ? (raw.hasAns.get(qid) ? 0.0 : 1.0) : s)
  }
  return out
}

/** make_eval_dict: exact, f1 (percent) and total over qids (all when omitted). */
function makeEvalDict(exact: Map<string, number>, f1: Map<string, number>, qids?: string[]): {exact: number; f1: number; total: number} {
  const ids = qids ?? [...exact.keys()]
  let e = 0
  let f = 0
  for (const k of ids) {
    e += exact.get(k) as number
    f += f1.get(k) as number
  }
  return {exact: (100.0 * e) / ids.length, f1: (100.0 * f) / ids.length, total: ids.length}
}

/** merge_eval: copies new_eval's keys with a `prefix_`. */
function mergeEval(main: SquadV2Result, add: Record<string, number>, prefix: string): void {
  for (const [k, v] of Object.entries(add)) main[`${prefix}_${k}`] = v
}

/**
 * find_best_thresh: walk qids sorted (stably, in file order) by na-prob, every step moving
 * one more question to "answered"; the running score's first strict maximum wins.
 */
export function findBestThresh(preds: Map<string, string>, scores: Map<string, number>, naProbs: Map<string, number>, hasAns: Map<string, boolean>): [number, number] {
  let cur = 0
  for (const [qid, has] of hasAns) if (!has && preds.has(qid)) cur++
  let bestScore = cur
  let bestThresh = 0.0
  const qids = [...naProbs.keys()].sort((a, b) => (naProbs.get(a) as number) - (naProbs.get(b) as number))
  for (const qid of qids) {
    if (!scores.has(qid)) continue
    const pred = preds.get(qid)
    if (pred === undefined) continue // wrong either way
    const diff = hasAns.get(qid) ? (scores.get(qid) as number) : pred ? -1 : 0
    cur += diff
    if (cur > bestScore) {
      bestScore = cur
      bestThresh = naProbs.get(qid) as number
    }
  }
  return [(100.0 * bestScore) / scores.size, bestThresh]
}

/** evaluate-v2.0.py main(): the dict it prints, with best_* only when na-probs are given. */
export function evaluateV2(questions: GoldQuestion[], preds: Map<string, string>, opts: SquadV2Options = {}): SquadV2Result {
  if (questions.length === 0) throw new Error('no questions to score')
  const naProbs = opts.naProbs ?? new Map([...preds.keys()].map((k) => [k, 0.0]))
  const thresh = opts.naProbThresh ?? 1.0
  const raw = getRawScores(questions, preds)
  const exactT = applyNoAnsThreshold(raw.exact, raw, naProbs, thresh, preds)
  const f1T = applyNoAnsThreshold(raw.f1, raw, naProbs, thresh, preds)
  const out: SquadV2Result = {...makeEvalDict(exactT, f1T)}
  const hasIds = [...raw.hasAns].filter(([, v]) => v).map(([k]) => k)
  const noIds = [...raw.hasAns].filter(([, v]) => !v).map(([k]) => k)
  if (hasIds.length > 0) mergeEval(out, makeEvalDict(exactT, f1T, hasIds), 'HasAns')
  if (noIds.length > 0) mergeEval(out, makeEvalDict(exactT, f1T, noIds), 'NoAns')
  if (opts.naProbs) findAllBestThresh(out, preds, raw, opts.naProbs)
  return out
}

/** find_all_best_thresh */
function findAllBestThresh(out: SquadV2Result, preds: Map<string, string>, raw: RawScores, naProbs: Map<string, number>): void {
  const [bestExact, exactThresh] = findBestThresh(preds, raw.exact, naProbs, raw.hasAns)
  const [bestF1, f1Thresh] = findBestThresh(preds, raw.f1, naProbs, raw.hasAns)
  out.best_exact = bestExact
  out.best_exact_thresh = exactThresh
  out.best_f1 = bestF1
  out.best_f1_thresh = f1Thresh
}
