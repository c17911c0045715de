/**
 * Prediction of a whole document of any length in memory linear in its length (issue 36): the
 * same function as the forward pass (./model.ts forwardJoshi, mandarjoshi90/coref @bd04f2e1
 * independent.py get_predictions_and_loss), computed a block at a time. The encoder runs
 * BOUNDS.segments segments at once (segments are independent); span vectors and mention scores
 * BOUNDS.candidates candidates at once, only the scores kept; the top spans' vectors are computed
 * again; coarse scores BOUNDS.rows rows [rows, k] at once, each row's top c antecedents taken on the
 * host; fine scores (and the refinement of --coref-depth 2) by the same rows. What stays whole: the
 * sub-token vectors [N, H], the candidates' scores [K], the top spans' vectors [k, D] and their
 * antecedents and scores [k, c + 1]. docs/algorithms.md#coreference gives the bound in bytes.
 */
import * as tf from '@tensorflow/tfjs'
import type {BertConfig} from '../../model/config.js'
import {EVAL, type ForwardContext} from '../../model/layers.js'
import type {ParamStore} from '../../model/params.js'
import type {CorefHeadConfig} from './config.js'
import {predictedAntecedents, predictedClusters, toWords} from './decode.js'
import {type Head, mentionScores, spanVectors} from './head.js'
import {coarseRows, fineScores, refine} from './pairs.js'
import type {CorefDoc} from './segments.js'
import {type Antecedents, candidateSpans, extractSpans, topAntecedentRows, windowOf} from './spans.js'

/** Block sizes: segments per encoder call, candidates per span-vector call, top spans per pair-score call. */
export const BOUNDS = {segments: 2, candidates: 2048, rows: 128}
export type Bounds = typeof BOUNDS

/** What the bounded prediction needs of a CorefModel (not the class itself: model.ts calls this file). */
export interface CorefParts {
  config: BertConfig
  head: CorefHeadConfig
  params: ParamStore
  encode(d: CorefDoc, ctx: ForwardContext): tf.Tensor2D
}

/** A tensor's values, the tensor disposed (not tf.tidy(() => t.dataSync()): tidy walks a returned typed array element by element). */
function hostOf(t: tf.Tensor): Float32Array {
  const v = t.dataSync() as Float32Array
  t.dispose()
  return v
}

/** [a, n] of each block of `total` items, `size` at a time. */
function blocks(total: number, size: number): [number, number][] {
  const out: [number, number][] = []
  for (let a = 0; a < total; a += size) out.push([a, Math.min(size, total - a)])
  return out
}

/** The encoder's rows of the document, segments a block at a time: [N, H]. */
function encodeInBlocks(model: CorefParts, d: CorefDoc, b: Bounds): tf.Tensor2D {
  const parts = blocks(d.segments.length, b.segments).map(([a, n]) => tf.tidy(() => model.encode(windowOf(d, a, n), EVAL)))
  const x = tf.concat(parts, 0) as tf.Tensor2D // [N, H]
  for (const p of parts) p.dispose()
  return x
}

/** Mention scores of every candidate, a block of candidates at a time: host [K]. */
function mentionsInBlocks(m: Head, x: tf.Tensor2D, starts: Int32Array, ends: Int32Array, b: Bounds): Float32Array {
  const out = new Float32Array(starts.length)
  for (const [a, n] of blocks(starts.length, b.candidates)) {
    const [s, e] = [starts.subarray(a, a + n), ends.subarray(a, a + n)]
    out.set(hostOf(tf.tidy(() => mentionScores(m, spanVectors(m, x, s, e), s, e))), a)
  }
  return out
}

/** Each top span's c best antecedents by coarse score, and those scores (−∞ where masked): a block of rows at a time. */
function antecedentsInBlocks(m: Head, g: tf.Tensor2D, mention: tf.Tensor1D, c: number, b: Bounds): {ant: Antecedents; fast: Float32Array} {
  const k = g.shape[0]
  const ant: Antecedents = {c, index: new Int32Array(k * c), mask: new Uint8Array(k * c)}
  const fast = new Float32Array(k * c).fill(-Infinity) // [k, c]
  for (const [a, n] of blocks(k, b.rows)) {
    const rows = hostOf(tf.tidy(() => coarseRows(m, g, mention, a, n))) // [n, k]
    topAntecedentRows(rows, k, a, n, ant)
    for (let i = a; i < a + n; i++) for (let t = 0; t < c; t++) if (ant.mask[i * c + t]) fast[i * c + t] = rows[(i - a) * k + ant.index[i * c + t]]
  }
  return {ant, fast}
}

const rowsOfAnt = (ant: Antecedents, a: number, n: number): Antecedents => ({
  c: ant.c,
  index: ant.index.subarray(a * ant.c, (a + n) * ant.c),
  mask: ant.mask.subarray(a * ant.c, (a + n) * ant.c),
})

/** fast + fine scores [k, c] on the host, refining g coref_depth − 1 times (each refinement replaces g). */
function fineInBlocks(m: Head, d: CorefDoc, g0: tf.Tensor2D, ant: Antecedents, fast: Float32Array, starts: Int32Array, b: Bounds): Float32Array {
  const facts = {segment: Int32Array.from(starts, (s) => d.segmentOf[s]), speaker: Int32Array.from(starts, (s) => d.speakerOf[s]), genre: d.genre}
  const [k, c] = [g0.shape[0], ant.c]
  const scores = new Float32Array(k * c)
  let g = g0
  for (let depth = 0; depth < m.h.coref_depth; depth++) {
    for (const [a, n] of blocks(k, b.rows))
      scores.set(hostOf(tf.tidy(() => tf.tensor2d(fast.subarray(a * c, (a + n) * c), [n, c]).add(fineScores(m, g, rowsOfAnt(ant, a, n), facts, a)))), a * c)
    if (depth + 1 === m.h.coref_depth) break
    const parts = blocks(k, b.rows).map(([a, n]) =>
      tf.tidy(() => refine(m, g, rowsOfAnt(ant, a, n), tf.tensor2d(scores.subarray(a * c, (a + n) * c), [n, c]), a)),
    )
    const next = tf.concat(parts, 0) as tf.Tensor2D // [k, D]
    for (const p of parts) p.dispose()
    if (g !== g0) g.dispose()
    g = next
  }
  if (g !== g0) g.dispose()
  return scores
}

/** The top spans, their antecedents and scores [k, c + 1] (column 0 the dummy, 0) of a whole document, on the host. */
export interface BoundedScores {
  starts: Int32Array // [k]
  ends: Int32Array // [k]
  mention: Float32Array // [k]
  ant: Antecedents
  scores: Float32Array // [k, c + 1]
}

/** The forward pass of Joshi et al.'s head on a whole document, a block at a time (EVAL: no dropout). */
export function boundedScores(model: CorefParts, d: CorefDoc, b: Bounds = BOUNDS): BoundedScores {
  const m: Head = {p: model.params, h: model.head, ctx: EVAL}
  const x = encodeInBlocks(model, d, b) // [N, H]
  const held: tf.Tensor[] = [x]
  try {
    const cand = candidateSpans(d, model.head.max_span_width)
    const all = mentionsInBlocks(m, x, cand.starts, cand.ends, b) // [K]
    const top = extractSpans(all, cand.starts, cand.ends, Math.floor(d.wordOf.length * model.head.top_span_ratio))
    const [starts, ends] = [Int32Array.from(top, (i) => cand.starts[i]), Int32Array.from(top, (i) => cand.ends[i])]
    const mention = Float32Array.from(top, (i) => all[i]) // [k]
    const g = tf.tidy(() => spanVectors(m, x, starts, ends)) // [k, D]
    const topMention = tf.tensor1d(mention)
    held.push(g, topMention)
    const c = Math.min(model.head.max_top_antecedents, top.length)
    const {ant, fast} = antecedentsInBlocks(m, g, topMention, c, b)
    const fine = c > 0 ? fineInBlocks(m, d, g, ant, fast, starts, b) : new Float32Array(0) // [k, c]
    const scores = new Float32Array(top.length * (c + 1)) // [k, c + 1], column 0 the dummy (0)
    for (let i = 0; i < top.length; i++) scores.set(fine.subarray(i * c, (i + 1) * c), i * (c + 1) + 1)
    return {starts, ends, mention, ant, scores}
  } finally {
    for (const t of held) t.dispose()
  }
}

/** Predicted clusters of a whole document (Joshi et al.'s head), as [firstWord, lastWord] spans; an empty document has none. */
export function predictBounded(model: CorefParts, d: CorefDoc, b: Bounds = BOUNDS): [number, number][][] {
  if (d.wordOf.length === 0) return []
  const o = boundedScores(model, d, b)
  const antecedent = predictedAntecedents(o.scores, o.ant, o.starts.length)
  return toWords(predictedClusters(o, antecedent, model.head.singletons), d.wordOf)
}
