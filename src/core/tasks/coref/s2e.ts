/**
 * The start-to-end head (`--head s2e`; Kirstain, Ram and Levy 2021, "Coreference Resolution without
 * Span Representations"; yuvalkirstain/s2e-coref @4037e754, modeling.py S2E): no span vectors.
 * Four token FFNNs (Linear → GeLU → LayerNorm → dropout) give start and end vectors for mentions
 * (m^s, m^e) and for coreference (a^s, a^e); a span's mention score is
 * v_s·m^s_s + v_e·m^e_e + m^s_sᵀ B m^e_e, the top ⌊ratio·N⌋ candidates are kept, and
 * a pair's antecedent score is s_m(i) + s_m(j) plus four bilinear terms over the start and end
 * vectors (s2s, e2e, s2e, e2s), every earlier span an antecedent. The loss and decoding are the
 * Joshi head's (./loss.ts, ./decode.ts). One deviation: the top spans are chosen without crossing
 * (ExtractSpans, ./spans.ts) as in the Joshi head, where the reference's plain top-k allows crossing
 * spans; two crossing mentions of one cluster cannot be written as CoNLL-2012 brackets (the
 * scorer reads them back as other spans, or as repeats). docs/algorithms.md#coreference.
 */
import * as tf from '@tensorflow/tfjs'
import {dropout, layerNorm, linear} from '../../model/layers.js'
import {type ParamSpec, layerNormSpecs, linearSpecs} from '../../model/params.js'
import type {CorefHeadConfig} from './config.js'
import {type Head, P, rowsOf} from './head.js'
import type {Antecedents} from './spans.js'

const S = `${P}.s2e`
const REPS = ['start_mention', 'end_mention', 'start_coref', 'end_coref'] as const
const BILINEAR = ['antecedent_s2s', 'antecedent_e2e', 'antecedent_s2e', 'antecedent_e2s'] as const

/** Every parameter of the s2e head for encoder width `hidden` (F = --ffnn-size). */
export function s2eSpecs(hidden: number, h: CorefHeadConfig): ParamSpec[] {
  const F = h.ffnn_size
  return [
    ...REPS.flatMap((r) => [...linearSpecs(`${S}.${r}_mlp.dense`, hidden, F), ...layerNormSpecs(`${S}.${r}_mlp.layer_norm`, F)]),
    ...linearSpecs(`${S}.mention_start_classifier`, F, 1),
    ...linearSpecs(`${S}.mention_end_classifier`, F, 1),
    ...linearSpecs(`${S}.mention_s2e_classifier`, F, F),
    ...BILINEAR.flatMap((b) => linearSpecs(`${S}.${b}_classifier`, F, F)),
  ]
}

/** FullyConnectedLayer: dropout(LayerNorm(GeLU(x W + b))), [N, H] → [N, F]. */
function tokenFfnn(m: Head, name: (typeof REPS)[number], x: tf.Tensor2D): tf.Tensor2D {
  const y = layerNorm(m.p, `${S}.${name}_mlp.layer_norm`, linear(m.p, `${S}.${name}_mlp.dense`, x, 'gelu'), 1e-12)
  return dropout(y, m.h.dropout, m.ctx) as tf.Tensor2D // [N, F]
}

/** The four token representations of a document's rows x [N, H]: each [N, F]. */
export function s2eReps(m: Head, x: tf.Tensor2D) {
  const [ms, me, cs, ce] = REPS.map((r) => tokenFfnn(m, r, x))
  return {ms, me, cs, ce}
}
export type S2eReps = ReturnType<typeof s2eReps>

/** _calc_mention_logits at the candidate spans: v_s·m^s_s + v_e·m^e_e + (B m^s_s)·m^e_e → [K]. */
export function s2eMentionScores(m: Head, r: S2eReps, starts: Int32Array, ends: Int32Array): tf.Tensor1D {
  const ms = rowsOf(r.ms, starts) // [K, F]
  const me = rowsOf(r.me, ends) // [K, F]
  const unary = linear(m.p, `${S}.mention_start_classifier`, ms).add(linear(m.p, `${S}.mention_end_classifier`, me)) // [K, 1]
  const joint = linear(m.p, `${S}.mention_s2e_classifier`, ms).mul(me).sum(1) // [K]
  return unary.reshape([-1]).add(joint) as tf.Tensor1D // [K]
}

/** Every earlier span as an antecedent: c = k, entry t of span i is span t, real when t < i. */
export function allEarlier(k: number): Antecedents {
  const index = new Int32Array(k * k)
  const mask = new Uint8Array(k * k)
  for (let i = 0; i < k; i++)
    for (let t = 0; t < k; t++) {
      index[i * k + t] = t
      mask[i * k + t] = t < i ? 1 : 0
    }
  return {c: k, index, mask}
}

/**
 * _calc_coref_logits + the mention scores of both spans, −∞ where j ≥ i: [k, k]. cs/ce are the
 * coreference start/end vectors of the top spans [k, F]; mention [k].
 */
export function s2eAntecedentScores(m: Head, cs: tf.Tensor2D, ce: tf.Tensor2D, mention: tf.Tensor1D): tf.Tensor2D {
  const k = cs.shape[0]
  const bil = (name: (typeof BILINEAR)[number], a: tf.Tensor2D, b: tf.Tensor2D) =>
    tf.matMul(linear(m.p, `${S}.${name}_classifier`, a) as tf.Tensor2D, b, false, true) // [k, k]
  const pair = bil('antecedent_s2s', cs, cs)
    .add(bil('antecedent_e2e', ce, ce))
    .add(bil('antecedent_s2e', cs, ce))
    .add(bil('antecedent_e2s', ce, cs))
  const logMask = new Float32Array(k * k)
  for (let i = 0; i < k; i++) logMask.fill(-Infinity, i * k + i, (i + 1) * k) // j ≥ i
  return pair
    .add(mention.expandDims(1))
    .add(mention.expandDims(0))
    .add(tf.tensor2d(logMask, [k, k])) as tf.Tensor2D // [k, k]
}
