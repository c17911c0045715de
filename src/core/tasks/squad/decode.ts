/**
 * run_squad's write_predictions for one question: n-best start × end pairs over its windows,
 * texts mapped back to the passage, softmax probabilities, and for v2.0 the null answer
 * against the best span (null_odds).
 */
import type {SquadFeature, TokenizedDoc} from './features.js'
import {detokenize, finalTextSpan} from './final-text.js'
import {maxOf} from '../../util/arrays.js'

/** The model's per-position start and end logits of one feature (padding beyond its tokens is ignored). */
export interface FeatureLogits {
  start: ArrayLike<number>
  end: ArrayLike<number>
}

export interface DecodeOptions {
  /** n_best_size (20) */
  nBest: number
  /** max_answer_length in tokens (30) */
  maxAnswerLen: number
  /** version_2_with_negative: consider the null answer */
  v2: boolean
  /** null_score_diff_threshold (0.0): predict "" when null score − best span score exceeds it */
  nullThreshold: number
}

export const DEFAULT_DECODE: DecodeOptions = {nBest: 20, maxAnswerLen: 30, v2: false, nullThreshold: 0.0}

/** One entry of nbest_predictions.json. */
export interface NbestEntry {
  text: string
  probability: number
  start_logit: number
  end_logit: number
}

export interface QuestionPrediction {
  qid: string
  /** the answer of predictions.json ("" for no answer) */
  text: string
  nbest: NbestEntry[]
  /** v2 only: score_null − best non-null score (null_odds.json) */
  nullOdds?: number
}

/** A span's text: the passage's own characters from the first to the last covered code point. */
export interface SpanText {
  text: string
  /** code point offsets into the context, end exclusive */
  charStart: number
  charEnd: number
}

/**
 * The passage text of feature positions [s, e] (both in the passage): the covered doc words,
 * narrowed by get_final_text to what the WordPieces cover, taken from the context itself.
 */
export function spanText(doc: TokenizedDoc, f: SquadFeature, s: number, e: number, basicTokenize: (t: string) => string[]): SpanText {
  const first = f.tokenToOrig[s]
  const last = f.tokenToOrig[e]
  const origChars: string[] = []
  const toContext: number[] = [] // context index of each orig_text character (−1: a joining space)
  for (let w = first; w <= last; w++) {
    if (w > first) {
      origChars.push(' ')
      toContext.push(-1)
    }
    for (let i = doc.wordStart[w]; i < doc.wordEnd[w]; i++) {
      origChars.push(doc.chars[i])
      toContext.push(i)
    }
  }
  const narrowed = finalTextSpan(detokenize(f.tokens.slice(s, e + 1)), origChars.join(''), basicTokenize)
  const charStart = narrowed ? toContext[narrowed[0]] : doc.wordStart[first]
  const charEnd = (narrowed ? toContext[narrowed[1]] : doc.wordEnd[last] - 1) + 1
  return {text: doc.chars.slice(charStart, charEnd).join(''), charStart, charEnd}
}

/**
 * _get_best_indexes: positions of the n largest logits, ties in position order (Python's stable
 * sort of the reversed order). One pass keeping the n best in order, not a sort of every position.
 */
export function bestIndexes(logits: ArrayLike<number>, n: number): number[] {
  const idx: number[] = []
  const val: number[] = []
  for (let i = 0; i < logits.length; i++) {
    const v = logits[i]
    if (idx.length === n && !(v > val[n - 1])) continue // not above the n-th best (an equal one came first)
    let at = idx.length === n ? n - 1 : idx.length
    while (at > 0 && v > val[at - 1]) at--
    idx.splice(at, 0, i)
    val.splice(at, 0, v)
    if (idx.length > n) {
      idx.pop()
      val.pop()
    }
  }
  return idx
}

/** _compute_softmax */
export function softmax(scores: number[]): number[] {
  if (scores.length === 0) return []
  const max = maxOf(scores)
  const exps = scores.map((s) => Math.exp(s - max))
  let total = 0.0
  for (const x of exps) total += x
  return exps.map((x) => x / total)
}

/** _PrelimPrediction */
interface Prelim {
  feature: number
  start: number
  end: number
  startLogit: number
  endLogit: number
}

/** The valid (start, end) pairs of one feature: in the passage, start with max context, 0 ≤ length ≤ cap. */
function featurePrelims(f: SquadFeature, k: number, l: FeatureLogits, o: DecodeOptions): Prelim[] {
  const out: Prelim[] = []
  const n = f.tokens.length
  const ends = bestIndexes(l.end, o.nBest) // once a feature, not once a start
  for (const s of bestIndexes(l.start, o.nBest)) {
    for (const e of ends) {
      if (s >= n || e >= n || f.tokenToOrig[s] < 0 || f.tokenToOrig[e] < 0) continue
      if (!f.maxContext[s] || e < s || e - s + 1 > o.maxAnswerLen) continue
      out.push({feature: k, start: s, end: e, startLogit: l.start[s], endLogit: l.end[e]})
    }
  }
  return out
}

/** The null answer of the window where start_logit[0] + end_logit[0] is smallest, and that score_null. */
function nullPrelim(logits: FeatureLogits[]): {prelim: Prelim; scoreNull: number} {
  let prelim: Prelim = {feature: 0, start: 0, end: 0, startLogit: 0, endLogit: 0}
  let scoreNull = 1000000 // large and positive, as run_squad
  logits.forEach((l, k) => {
    const score = l.start[0] + l.end[0]
    if (score < scoreNull) {
      scoreNull = score
      prelim = {feature: k, start: 0, end: 0, startLogit: l.start[0], endLogit: l.end[0]}
    }
  })
  return {prelim, scoreNull}
}

/** An n-best entry before its probability. */
interface Scored {
  text: string
  startLogit: number
  endLogit: number
}

/** The n-best loop of write_predictions: distinct texts in score order, then the null answer (v2). */
function nbestTexts(prelims: Prelim[], text: (p: Prelim) => string, o: DecodeOptions, nul: Prelim | null): Scored[] {
  const seen = new Set<string>()
  const nbest: Scored[] = []
  for (const p of prelims) {
    if (nbest.length >= o.nBest) break
    const t = p.start > 0 ? text(p) : ''
    if (p.start > 0 && seen.has(t)) continue
    seen.add(t)
    nbest.push({text: t, startLogit: p.startLogit, endLogit: p.endLogit})
  }
  if (nul && !seen.has('')) nbest.push({text: '', startLogit: nul.startLogit, endLogit: nul.endLogit})
  // "In very rare edge cases we could have no valid predictions": the nonce of run_squad, and of
  // Hugging Face's port (squad_metrics.compute_predictions_logits) when only the null is left
  if (!nbest.some((e) => e.text)) nbest.unshift({text: 'empty', startLogit: 0.0, endLogit: 0.0})
  return nbest
}

/**
 * One question's prediction from its features (in window order) and their logits; a question
 * without features (an empty passage) gets run_squad's answer for that case ("empty", or "" in v2).
 * `basicTokenize` is BERT's BasicTokenizer with the model's do_lower_case (get_final_text).
 */
export function decodeQuestion(qid: string, doc: TokenizedDoc, features: SquadFeature[], logits: FeatureLogits[], basicTokenize: (t: string) => string[], opts: Partial<DecodeOptions> = {}): QuestionPrediction {
  const o = {...DEFAULT_DECODE, ...opts}
  if (logits.length !== features.length) throw new Error(`${features.length} features but ${logits.length} logits`)
  const prelims = features.flatMap((f, k) => featurePrelims(f, k, logits[k], o))
  const nul = o.v2 ? nullPrelim(logits) : null
  if (nul) prelims.push(nul.prelim)
  prelims.sort((a, b) => b.startLogit + b.endLogit - (a.startLogit + a.endLogit))
  const text = (p: Prelim) => spanText(doc, features[p.feature], p.start, p.end, basicTokenize).text
  const scored = nbestTexts(prelims, text, o, nul?.prelim ?? null)
  const probs = softmax(scored.map((e) => e.startLogit + e.endLogit))
  const nbest = scored.map((e, i): NbestEntry => ({text: e.text, probability: probs[i], start_logit: e.startLogit, end_logit: e.endLogit}))
  if (!nul) return {qid, text: nbest[0].text, nbest}
  const best = scored.find((e) => e.text) as Scored
  const nullOdds = nul.scoreNull - best.startLogit - best.endLogit
  return {qid, text: nullOdds > o.nullThreshold ? '' : best.text, nbest, nullOdds}
}
