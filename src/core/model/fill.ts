import * as tf from '@tensorflow/tfjs'
import {SpanError} from '../stream/errors.js'
import type {SpecialIds} from '../stream/header.js'
import type {WordPieceTokenizer} from '../text/tokenizer.js'
import {MlmHead, SboHead, decoderWeight} from './heads.js'
import {EVAL} from './layers.js'
import type {SpanBertForPreTraining} from './pretraining.js'

/**
 * `span fill`: the masked spans of a text filled by the MLM head (one prediction per
 * position from its own state), the SBO head (SpanBERT §3.2: from the span's outer boundary
 * states h(s−1), h(e+1) and the relative position), or both (summed log-probabilities); the
 * top fillings of a span by beam search over its positions.
 */
export type FillHead = 'mlm' | 'sbo' | 'both'

/** A run of consecutive [MASK]s: its characters [start, end) in the text, its first token position, its length. */
export interface MaskRun {
  start: number
  end: number
  pos: number
  len: number
}

export interface FillQuery {
  ids: number[] // [CLS] … [SEP]
  runs: MaskRun[]
}

const MASK_RUN = /\[MASK\](?:[ \t]*\[MASK\])*/g

/** The text tokenized with its [MASK] runs kept as [MASK] ids; refuses text without a mask or longer than the model. */
export function parseMasks(text: string, tok: WordPieceTokenizer, special: SpecialIds, maxLen: number): FillQuery {
  const ids = [special.cls]
  const runs: MaskRun[] = []
  let at = 0
  for (const m of text.matchAll(MASK_RUN)) {
    for (const id of tok.encode(text.slice(at, m.index))) ids.push(id) // no spread: a long line would overflow the call stack
    const len = m[0].split('[MASK]').length - 1
    runs.push({start: m.index, end: m.index + m[0].length, pos: ids.length, len})
    for (let i = 0; i < len; i++) ids.push(special.mask)
    at = m.index + m[0].length
  }
  if (runs.length === 0) throw new SpanError('no [MASK] in the text: mark each span to fill with one [MASK] per token')
  for (const id of tok.encode(text.slice(at))) ids.push(id)
  ids.push(special.sep)
  if (ids.length > maxLen) throw new SpanError(`${ids.length} tokens with [CLS] and [SEP], longer than the model's ${maxLen} positions`)
  return {ids, runs}
}

/** The heads a fill needs: their parameter prefixes. */
export function neededHeads(head: FillHead): {prefix: string; what: string}[] {
  const mlm = {prefix: 'cls.predictions.', what: 'MLM head (cls.predictions.*)'}
  const sbo = {prefix: `${SboHead.prefix}.`, what: "span boundary head (cls.pair_target_predictions.*, SpanBERT's SBO)"}
  return head === 'mlm' ? [mlm] : head === 'sbo' ? [sbo] : [mlm, sbo]
}

/**
 * Log-probabilities over the vocabulary of every masked position, run after run: [N, V] on
 * the host (N = the runs' total length). One encoder pass; dropout off.
 */
export function maskLogProbs(model: SpanBertForPreTraining, ids: number[], runs: {pos: number; len: number}[], head: FillHead): {lp: Float32Array; V: number} {
  const c = model.config
  if (head !== 'mlm') {
    const long = runs.find((r) => r.len > c.sbo.max_targets)
    if (long) throw new SpanError(`a run of ${long.len} [MASK]s is longer than the SBO head predicts (max_targets ${c.sbo.max_targets})`)
  }
  const pos = runs.flatMap((r) => Array.from({length: r.len}, (_, i) => r.pos + i))
  const out = tf.tidy(() => {
    const T = ids.length
    const h = model.encoder.forward(tf.tensor2d([ids], [1, T], 'int32'), tf.zeros([1, T], 'int32'), tf.ones([1, T]), EVAL) // [1, T, H]
    const hFlat = h.reshape([T, c.hidden_size]) as tf.Tensor2D // [T, H]
    const dec = decoderWeight(model.params)
    let lp = tf.zeros([pos.length, c.vocab_size]) // [N, V]
    if (head !== 'sbo') lp = lp.add(tf.logSoftmax(new MlmHead(model.params, c).forward(hFlat, tf.tensor1d(pos, 'int32'), dec)))
    if (head !== 'mlm') {
      const left = runs.flatMap((r) => new Array<number>(r.len).fill(r.pos - 1))
      const right = runs.flatMap((r) => new Array<number>(r.len).fill(r.pos + r.len))
      const rel = runs.flatMap((r) => Array.from({length: r.len}, (_, i) => i))
      const t1 = (a: number[]) => tf.tensor1d(a, 'int32')
      lp = lp.add(tf.logSoftmax(new SboHead(model.params, c).forward(hFlat, t1(left), t1(right), t1(rel), dec))) // [N, V]
    }
    return lp
  })
  const lp = out.dataSync() as Float32Array
  out.dispose()
  return {lp, V: c.vocab_size}
}

export interface Filling {
  ids: number[]
  score: number
}

/** The `beam` best tokens of one row of scores, best first, skipping banned ids. */
function topTokens(lp: Float32Array, row: number, V: number, beam: number, banned: Set<number>): number[] {
  const best: number[] = []
  const score = (v: number): number => lp[row * V + v]
  for (let v = 0; v < V; v++) {
    if (banned.has(v) || (best.length === beam && score(v) <= score(best[beam - 1]))) continue
    let i = best.length
    while (i > 0 && score(best[i - 1]) < score(v)) i--
    best.splice(i, 0, v)
    if (best.length > beam) best.pop()
  }
  return best
}

/** The top k fillings of a run whose positions are rows first…first+len−1 of lp (summed scores), by beam search of width beam. */
export function beamSearch(lp: Float32Array, V: number, first: number, len: number, k: number, beam: number, banned: Set<number>): Filling[] {
  let beams: Filling[] = [{ids: [], score: 0}]
  for (let i = 0; i < len; i++) {
    const cands = topTokens(lp, first + i, V, beam, banned)
    const next: Filling[] = []
    for (const b of beams) for (const v of cands) next.push({ids: [...b.ids, v], score: b.score + lp[(first + i) * V + v]})
    beams = next.sort((a, b) => b.score - a.score).slice(0, beam)
  }
  return beams.slice(0, k)
}

/** WordPiece tokens as text: `##` pieces joined to the word before, words by spaces. */
export function detokenize(tokens: string[]): string {
  return tokens.reduce((s, t) => (t.startsWith('##') ? s + t.slice(2) : s === '' ? t : `${s} ${t}`), '')
}
