/**
 * Antecedent scores of the top spans (Joshi et al. 2019; mandarjoshi90/coref @bd04f2e1,
 * independent.py coarse_to_fine_pruning, get_fast_antecedent_scores, get_slow_antecedent_scores
 * and the coref_depth loop of get_predictions_and_loss): coarse bilinear scores with the mention
 * scores and a distance prior over all earlier spans, the top c kept, then fine FFNN scores of
 * [g_i; g_j; g_i∘g_j; φ]. docs/algorithms.md#coreference.
 */
import * as tf from '@tensorflow/tfjs'
import {dropout, linear} from '../../model/layers.js'
import {type Head, P, rowsOf} from './head.js'
import {type Antecedents, bucketDistance} from './spans.js'

/** Coarse scores [k, k]: s_m(i) + s_m(j) + g_i·W·g_j + prior(bucket(i − j)), −∞ where j ≥ i. */
export function coarseScores(m: Head, g: tf.Tensor2D, mention: tf.Tensor1D): tf.Tensor2D {
  return coarseRows(m, g, mention, 0, g.shape[0])
}

/** Rows [a, a + n) of the coarse scores: [n, k] (a long document's prediction takes them a block at a time). */
export function coarseRows(m: Head, g: tf.Tensor2D, mention: tf.Tensor1D, a: number, n: number): tf.Tensor2D {
  const k = g.shape[0]
  const whole = a === 0 && n === k
  const src = dropout(linear(m.p, `${P}.src_projection`, whole ? g : g.slice([a, 0], [n, -1])), m.h.dropout, m.ctx) // [n, D]
  const tgt = dropout(g, m.h.dropout, m.ctx) // [k, D]
  const logMask = new Float32Array(n * k)
  const buckets = new Int32Array(n * k)
  for (let r = 0; r < n; r++)
    for (let j = 0; j < k; j++) {
      logMask[r * k + j] = a + r - j >= 1 ? 0 : -Infinity
      buckets[r * k + j] = bucketDistance(a + r - j)
    }
  const priorEmb = dropout(m.p.get(`${P}.antecedent_distance_prior_emb`), m.h.dropout, m.ctx) // [10, fs]
  const prior = linear(m.p, `${P}.antecedent_distance_prior`, priorEmb) as tf.Tensor2D // [10, 1]
  const mi = whole ? mention : mention.slice([a], [n]) // [n]
  const pair = mi.expandDims(1).add(mention.expandDims(0)) // [n, k]
  const dist = rowsOf(prior, buckets).reshape([n, k]) // [n, k]
  return tf
    .matMul(src, tgt, false, true)
    .add(pair)
    .add(dist)
    .add(tf.tensor2d(logMask, [n, k])) as tf.Tensor2D // [n, k]
}

/**
 * The coarse scores of the kept antecedents: [k, c], −∞ where masked (a padding entry of a span
 * with fewer than c earlier spans), as coarse_to_fine_pruning's gathered scores carry
 * log(antecedents_mask): a padding entry must not count in the loss's normaliser.
 */
export function pickScores(fast: tf.Tensor2D, ant: Antecedents): tf.Tensor2D {
  const k = fast.shape[0]
  const flat = Int32Array.from(ant.index, (j, t) => Math.floor(t / ant.c) * k + j)
  const logMask = tf.tensor2d(
    Float32Array.from(ant.mask, (m) => (m ? 0 : -Infinity)),
    [k, ant.c],
  ) // [k, c]
  return rowsOf(fast.reshape([k * k, 1]) as tf.Tensor2D, flat)
    .reshape([k, ant.c])
    .add(logMask) as tf.Tensor2D // [k, c]
}

/** Host facts of each (span, antecedent) pair the pair features read. */
export interface PairFacts {
  segment: Int32Array // [k] segment of each top span's start
  speaker: Int32Array // [k] speaker id of each top span's start
  genre: number
}

/** φ [n·c, Φ] of rows a.. (ant holds those rows): antecedent distance bucket, segment distance, same speaker, genre embeddings (dropout). */
function pairFeatures(m: Head, ant: Antecedents, f: PairFacts, a: number): tf.Tensor2D {
  const {c, index} = ant
  const row = (t: number) => a + Math.floor(t / c)
  const table = (name: string) => m.p.get(`${P}.${name}`) as tf.Tensor2D
  const parts = [
    rowsOf(
      table('antecedent_distance_emb'),
      Int32Array.from(index, (j, t) => bucketDistance(row(t) - j)),
    ),
    rowsOf(
      table('segment_distance_embeddings'),
      Int32Array.from(index, (j, t) => Math.min(Math.max(f.segment[row(t)] - f.segment[j], 0), m.h.max_training_segments - 1)),
    ),
  ]
  if (m.h.speakers)
    parts.push(
      rowsOf(
        table('same_speaker_emb'),
        Int32Array.from(index, (j, t) => (f.speaker[row(t)] === f.speaker[j] ? 1 : 0)),
      ),
    )
  if (m.h.genres.length > 0) parts.push(rowsOf(table('genre_embeddings'), new Int32Array(index.length).fill(f.genre)))
  return dropout(tf.concat(parts, 1), m.h.dropout, m.ctx) as tf.Tensor2D // [k·c, Φ]
}

/**
 * Fine scores [k, c] = FFNN([g_i; g_j; g_i∘g_j; φ]). The first layer's weight is applied by
 * column blocks (W_a g_i + W_b g_j + W_c (g_i∘g_j) + W_d φ): the same function without the
 * [k, c, 3D + Φ] concatenation. With `a`, the rows a..a+k of the spans whose antecedents `ant`
 * holds (k = its rows), gAll every span's vector: a long document's prediction, a block at a time.
 */
export function fineScores(m: Head, gAll: tf.Tensor2D, ant: Antecedents, f: PairFacts, a = 0): tf.Tensor2D {
  const {c} = ant
  const k = c > 0 ? ant.index.length / c : gAll.shape[0]
  const D = gAll.shape[1]
  const g = a === 0 && k === gAll.shape[0] ? gAll : (gAll.slice([a, 0], [k, -1]) as tf.Tensor2D) // [k, D] the rows' own
  const gj = rowsOf(gAll, ant.index) // [k·c, D]
  const w = m.p.get(`${P}.slow_antecedent_scores.0.weight`) as tf.Tensor2D // [F, 3D + Φ]
  const block = (from: number, size: number) => w.slice([0, from], [-1, size]) // [F, size]
  const gi = g
    .expandDims(1)
    .tile([1, c, 1])
    .reshape([k * c, D]) // [k·c, D]
  const phi = pairFeatures(m, ant, f, a) // [k·c, Φ]
  const mi = tf.matMul(g, block(0, D), false, true) // [k, F]
  const mj = tf.matMul(gAll, block(D, D), false, true) // [all, F]
  let hid = tf.matMul(gi.mul(gj), block(2 * D, D), false, true) // [k·c, F]
  hid = hid.add(tf.matMul(phi, block(3 * D, phi.shape[1]), false, true))
  hid = hid
    .reshape([k, c, -1])
    .add(mi.expandDims(1))
    .add(rowsOf(mj as tf.Tensor2D, ant.index).reshape([k, c, -1])) // [k, c, F]
  hid = dropout(hid.add(m.p.get(`${P}.slow_antecedent_scores.0.bias`)).relu(), m.h.dropout, m.ctx)
  return linear(m.p, `${P}.slow_antecedent_scores.1`, hid).reshape([k, c]) as tf.Tensor2D // [k, c]
}

/**
 * The higher-order refinement (coref_depth > 1): attend over [self, antecedents] with softmax of
 * [0, scores], gate f = σ(W[g; a]), g' = f∘a + (1 − f)∘g. scores [k, c] → g' [k, D]; with `a`, of
 * the rows a..a+k whose antecedents `ant` and scores hold (as fineScores).
 */
export function refine(m: Head, gAll: tf.Tensor2D, ant: Antecedents, scores: tf.Tensor2D, a = 0): tf.Tensor2D {
  const [k, D] = [scores.shape[0], gAll.shape[1]]
  const g = a === 0 && k === gAll.shape[0] ? gAll : (gAll.slice([a, 0], [k, -1]) as tf.Tensor2D) // [k, D]
  const weights = tf.softmax(tf.concat([tf.zeros([k, 1]), scores], 1)) // [k, c + 1]
  const cand = tf.concat([g.expandDims(1), rowsOf(gAll, ant.index).reshape([k, ant.c, D])], 1) // [k, c + 1, D]
  const attended = weights.expandDims(2).mul(cand).sum(1) as tf.Tensor2D // [k, D]
  const f = tf.sigmoid(linear(m.p, `${P}.f`, tf.concat([g, attended], 1))) // [k, D]
  return f.mul(attended).add(tf.scalar(1).sub(f).mul(g)) as tf.Tensor2D // [k, D]
}
