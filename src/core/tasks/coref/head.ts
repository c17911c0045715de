/**
 * The coreference head's parameters and its span side (Joshi et al. 2019; mandarjoshi90/coref
 * @bd04f2e1, independent.py get_span_emb, get_masked_mention_word_scores, get_mention_scores,
 * util.py ffnn/projection): span vector g = [x_start; x_end; width embedding; attention-weighted
 * head], mention score = FFNN(g) + a width prior. Parameter names are `coref.*` (the encoder's
 * are `bert.*`; they train at --lr, these at --task-lr). docs/algorithms.md#coreference.
 */
import * as tf from '@tensorflow/tfjs'
import {gatherRows} from '../../engine/gather.js'
import {type ForwardContext, dropout, linear} from '../../model/layers.js'
import {type ParamSpec, type ParamStore, embeddingSpec, linearSpecs} from '../../model/params.js'
import {type CorefHeadConfig, pairFeatureDim, spanDim} from './config.js'
import {weightedRows} from './rows.js'
import {maxOf} from '../../util/arrays.js'

export const P = 'coref'

/** util.ffnn with one hidden layer: Linear → ReLU → dropout → Linear(→ out). */
function ffnnSpecs(prefix: string, inSize: number, hidden: number, out = 1): ParamSpec[] {
  return [...linearSpecs(`${prefix}.0`, inSize, hidden), ...linearSpecs(`${prefix}.1`, hidden, out)]
}

/** Every parameter of the head for encoder width `hidden`. */
export function corefSpecs(hidden: number, h: CorefHeadConfig): ParamSpec[] {
  const D = spanDim(hidden, h)
  const fs = h.feature_size
  return [
    ...linearSpecs(`${P}.mention_word_attn`, hidden, 1),
    embeddingSpec(`${P}.span_width_embeddings`, h.max_span_width, fs),
    ...ffnnSpecs(`${P}.mention_scores`, D, h.ffnn_size),
    embeddingSpec(`${P}.span_width_prior_embeddings`, h.max_span_width, fs),
    ...ffnnSpecs(`${P}.width_scores`, fs, h.ffnn_size),
    embeddingSpec(`${P}.antecedent_distance_prior_emb`, 10, fs),
    ...linearSpecs(`${P}.antecedent_distance_prior`, fs, 1),
    ...linearSpecs(`${P}.src_projection`, D, D),
    embeddingSpec(`${P}.antecedent_distance_emb`, 10, fs),
    embeddingSpec(`${P}.segment_distance_embeddings`, h.max_training_segments, fs),
    ...(h.speakers ? [embeddingSpec(`${P}.same_speaker_emb`, 2, fs)] : []),
    ...(h.genres.length > 0 ? [embeddingSpec(`${P}.genre_embeddings`, h.genres.length + 1, fs)] : []),
    ...ffnnSpecs(`${P}.slow_antecedent_scores`, 3 * D + pairFeatureDim(h), h.ffnn_size),
    ...(h.coref_depth > 1 ? linearSpecs(`${P}.f`, 2 * D, D) : []),
  ]
}

/** The head's parameters, as the optimiser's learning-rate groups see them. */
export const isHeadParam = (name: string): boolean => name.startsWith(`${P}.`)

export interface Head {
  p: ParamStore
  h: CorefHeadConfig
  ctx: ForwardContext
}

/** util.ffnn (depth 1) to one score: [..., in] → [..., 1]. */
export function ffnn(m: Head, prefix: string, x: tf.Tensor): tf.Tensor {
  const hid = dropout(linear(m.p, `${prefix}.0`, x).relu(), m.h.dropout, m.ctx) // [..., F]
  return linear(m.p, `${prefix}.1`, hid) // [..., 1]
}

/** Rows of a parameter table by host indices: [n, d]. */
export function rowsOf(table: tf.Tensor2D, at: ArrayLike<number>): tf.Tensor2D {
  return gatherRows(table, tf.tensor1d(Int32Array.from(at), 'int32'))
}

/**
 * get_span_emb: x [N, H] and spans [K] → g [K, D] = [x_s; x_e; dropout(width emb); head], the
 * head a softmax over the span's positions of a learned score per token (mention_word_attn).
 */
export function spanVectors(m: Head, x: tf.Tensor2D, starts: Int32Array, ends: Int32Array): tf.Tensor2D {
  const K = starts.length
  const N = x.shape[0]
  const L = maxOf(
    Array.from(starts, (s, i) => ends[i] - s + 1),
    1,
  )
  const idx = new Int32Array(K * L)
  const logMask = new Float32Array(K * L)
  for (let k = 0; k < K; k++)
    for (let l = 0; l < L; l++) {
      idx[k * L + l] = Math.min(starts[k] + l, N - 1)
      logMask[k * L + l] = starts[k] + l <= ends[k] ? 0 : -Infinity // log(mention_mask)
    }
  const a = linear(m.p, `${P}.mention_word_attn`, x) as tf.Tensor2D // [N, 1]
  const logits = rowsOf(a, idx)
    .reshape([K, L])
    .add(tf.tensor2d(logMask, [K, L])) // [K, L]
  const head = weightedRows(x, tf.softmax(logits) as tf.Tensor2D, tf.tensor2d(idx, [K, L], 'int32')) // [K, H]
  const widths = Int32Array.from(starts, (s, i) => ends[i] - s)
  const width = dropout(rowsOf(m.p.get(`${P}.span_width_embeddings`) as tf.Tensor2D, widths), m.h.dropout, m.ctx) // [K, fs]
  return tf.concat([rowsOf(x, starts), rowsOf(x, ends), width, head], 1) as tf.Tensor2D // [K, D]
}

/** get_mention_scores: FFNN(g) + the width prior FFNN(width prior embedding) → [K]. */
export function mentionScores(m: Head, g: tf.Tensor2D, starts: Int32Array, ends: Int32Array): tf.Tensor1D {
  const s = ffnn(m, `${P}.mention_scores`, g) // [K, 1]
  const prior = ffnn(m, `${P}.width_scores`, m.p.get(`${P}.span_width_prior_embeddings`)) as tf.Tensor2D // [W, 1]
  const widths = Int32Array.from(starts, (st, i) => ends[i] - st)
  return s.add(rowsOf(prior, widths)).reshape([-1]) as tf.Tensor1D // [K]
}
