/**
 * The coreference model (Joshi et al. 2019, "BERT for Coreference Resolution"; mandarjoshi90/coref
 * @bd04f2e1 independent.py): a BERT encoder over a document's independent segments, the span side
 * of ./head.ts, the top ⌊ratio·N⌋ spans without crossing (./spans.ts), coarse-to-fine antecedent
 * scores (./pairs.ts), the marginal log-likelihood (./loss.ts) and best-antecedent decoding
 * (./decode.ts). docs/algorithms.md#coreference.
 */
import * as tf from '@tensorflow/tfjs'
import {writeFile} from 'node:fs/promises'
import {Rng} from '../../util/rng.js'
import {BertEncoder} from '../../model/bert.js'
import {CONFIG_FILE, type CheckpointFile, WEIGHTS_FILE, paramsFromTensors, paramsToHost} from '../../model/checkpoint.js'
import {type BertConfig, configToJson} from '../../model/config.js'
import {EVAL, type ForwardContext} from '../../model/layers.js'
import {ParamStore, initParams} from '../../model/params.js'
import {type HostTensor, writeSafetensors} from '../../model/safetensors.js'
import type {CorefHeadConfig} from './config.js'
import {predictedAntecedents, predictedClusters, toWords} from './decode.js'
import {type Head, corefSpecs, mentionScores, rowsOf, spanVectors} from './head.js'
import {antecedentLabels, marginalLoss, mentionLoss} from './loss.js'
import {coarseScores, fineScores, pickScores, refine} from './pairs.js'
import {allEarlier, s2eAntecedentScores, s2eMentionScores, s2eReps, s2eSpecs} from './s2e.js'
import type {CorefDoc} from './segments.js'
import {type Antecedents, candidateSpans, extractSpans, topAntecedents} from './spans.js'
import {predictBounded} from './predict-bounded.js'
import {maxOf} from '../../util/arrays.js'

/** What one document's forward pass gives: the top spans (host), their antecedents and scores. */
export interface CorefOutput {
  starts: Int32Array // [k]
  ends: Int32Array // [k]
  cluster: Int32Array // [k] gold cluster id + 1 (0: none)
  mention: Float32Array // [k] mention scores
  ant: Antecedents
  scores: tf.Tensor2D // [k, c + 1], column 0 the dummy (0)
  /** the mention loss of --mention-loss (null: none) */
  mentionLoss: tf.Scalar | null
}

export class CorefModel {
  static specs(c: BertConfig, h: CorefHeadConfig) {
    return [...BertEncoder.specs(c), ...(h.head_type === 's2e' ? s2eSpecs(c.hidden_size, h) : corefSpecs(c.hidden_size, h))]
  }

  static init(c: BertConfig, h: CorefHeadConfig, seed: number): CorefModel {
    const params = new ParamStore()
    initParams(params, CorefModel.specs(c, h), c.initializer_range, new Rng(seed))
    return new CorefModel(c, h, params)
  }

  /** From checkpoint tensors: the encoder must be there; the head is taken where its shapes fit, else starts afresh. */
  static fromTensors(c: BertConfig, h: CorefHeadConfig, raw: Map<string, HostTensor>, source: string, seed: number, strict = false) {
    const fits = (s: {shape: number[]}, t: HostTensor) => t.shape.length === s.shape.length && t.shape.every((d, i) => d === s.shape[i])
    const {params, initialised} = paramsFromTensors(CorefModel.specs(c, h), raw, source, seed, c.initializer_range, fits, strict)
    return {model: new CorefModel(c, h, params), initialised}
  }

  readonly encoder: BertEncoder

  constructor(
    readonly config: BertConfig,
    readonly head: CorefHeadConfig,
    readonly params: ParamStore,
  ) {
    this.encoder = new BertEncoder(params, config)
  }

  /** The encoder over the document's segments, as one row per sub-token: [N, H] (call inside tf.tidy). */
  encode(d: CorefDoc, ctx: ForwardContext): tf.Tensor2D {
    const S = d.segments.length
    const T = maxOf(d.segments.map((s) => s.length))
    const ids = new Int32Array(S * T) // [PAD] is 0 in BERT vocabularies; masked out either way
    const mask = new Float32Array(S * T)
    d.segments.forEach((s, k) => (ids.set(s, k * T), mask.fill(1, k * T, k * T + s.length)))
    const h = this.encoder.forward(tf.tensor2d(ids, [S, T], 'int32'), tf.zeros([S, T], 'int32'), tf.tensor2d(mask, [S, T]), ctx) // [S, T, H]
    const rows = Int32Array.from(d.segmentOf, (s, n) => s * T + 1 + n - d.segStart[s]) // past each segment's [CLS]
    return rowsOf(h.reshape([S * T, this.config.hidden_size]) as tf.Tensor2D, rows) // [N, H]
  }

  /** The forward pass of one document (call inside tf.tidy). */
  forward(d: CorefDoc, ctx: ForwardContext): CorefOutput {
    return this.head.head_type === 's2e' ? this.forwardS2e(d, ctx) : this.forwardJoshi(d, ctx)
  }

  /** --head s2e (./s2e.ts): start/end vectors, the top spans by mention score, every earlier span an antecedent. */
  private forwardS2e(d: CorefDoc, ctx: ForwardContext): CorefOutput {
    const m: Head = {p: this.params, h: this.head, ctx}
    const r = s2eReps(m, this.encode(d, ctx)) // [N, F] each
    const cand = candidateSpans(d, this.head.max_span_width)
    const mention = s2eMentionScores(m, r, cand.starts, cand.ends) // [K]
    const top = extractSpans(mention.dataSync(), cand.starts, cand.ends, Math.floor(d.wordOf.length * this.head.top_span_ratio)) // non-crossing: CoNLL can write them
    const at = (a: Int32Array) => Int32Array.from(top, (i) => a[i])
    const [starts, ends] = [at(cand.starts), at(cand.ends)]
    const topM = rowsOf(mention.reshape([-1, 1]) as tf.Tensor2D, top).reshape([-1]) as tf.Tensor1D // [k]
    const scores = s2eAntecedentScores(m, rowsOf(r.cs, starts), rowsOf(r.ce, ends), topM) // [k, k]
    const withDummy = tf.concat([tf.zeros([top.length, 1]), scores], 1) as tf.Tensor2D // [k, k + 1]
    const ment = this.mentionLoss(ctx, mention, cand.cluster, topM, at(cand.cluster))
    return {
      starts,
      ends,
      cluster: at(cand.cluster),
      mention: topM.dataSync() as Float32Array,
      ant: allEarlier(top.length),
      scores: withDummy,
      mentionLoss: ment,
    }
  }

  /** Joshi et al.'s head: span vectors, non-crossing top spans, coarse-to-fine antecedents. */
  private forwardJoshi(d: CorefDoc, ctx: ForwardContext): CorefOutput {
    const m: Head = {p: this.params, h: this.head, ctx}
    const x = this.encode(d, ctx) // [N, H]
    const cand = candidateSpans(d, this.head.max_span_width)
    const g = spanVectors(m, x, cand.starts, cand.ends) // [K, D]
    const mention = mentionScores(m, g, cand.starts, cand.ends) // [K]
    const k = Math.floor(d.wordOf.length * this.head.top_span_ratio)
    const top = extractSpans(mention.dataSync(), cand.starts, cand.ends, k)
    const at = (a: Int32Array) => Int32Array.from(top, (i) => a[i])
    const [starts, ends] = [at(cand.starts), at(cand.ends)]
    const topM = rowsOf(mention.reshape([-1, 1]) as tf.Tensor2D, top).reshape([-1]) as tf.Tensor1D // [k]
    const topG = rowsOf(g, top) // [k, D]
    const fast = coarseScores(m, topG, topM) // [k, k]
    const ant = topAntecedents(fast.dataSync(), top.length, Math.min(this.head.max_top_antecedents, top.length))
    const scores = this.fine(m, d, topG, ant, pickScores(fast, ant), starts) // [k, c]
    const withDummy = tf.concat([tf.zeros([top.length, 1]), scores], 1) as tf.Tensor2D // [k, c + 1]
    const ment = this.mentionLoss(ctx, mention, cand.cluster, topM, at(cand.cluster))
    return {starts, ends, cluster: at(cand.cluster), mention: topM.dataSync() as Float32Array, ant, scores: withDummy, mentionLoss: ment}
  }

  /** --mention-loss when training: over all candidates [K] or the top spans [k]. */
  private mentionLoss(ctx: ForwardContext, all: tf.Tensor1D, allGold: Int32Array, top: tf.Tensor1D, topGold: Int32Array): tf.Scalar | null {
    const ml = this.head.mention_loss ?? 'none'
    if (!ctx.training || ml === 'none') return null
    return ml === 'all' ? mentionLoss(all, allGold) : mentionLoss(top, topGold)
  }

  /** fast + fine scores, refining the span vectors coref_depth − 1 times: [k, c]. */
  private fine(m: Head, d: CorefDoc, g0: tf.Tensor2D, ant: Antecedents, fast: tf.Tensor2D, starts: Int32Array): tf.Tensor2D {
    const facts = {segment: Int32Array.from(starts, (s) => d.segmentOf[s]), speaker: Int32Array.from(starts, (s) => d.speakerOf[s]), genre: d.genre}
    let g = g0
    let scores = fast
    for (let depth = 0; depth < this.head.coref_depth; depth++) {
      scores = fast.add(fineScores(m, g, ant, facts)) // [k, c]
      if (depth + 1 < this.head.coref_depth) g = refine(m, g, ant, scores)
    }
    return scores
  }

  /** The document's loss: the marginal log-likelihood summed over its top spans (call under the tape). */
  loss(d: CorefDoc, ctx: ForwardContext): tf.Scalar {
    const o = this.forward(d, ctx)
    const loss = marginalLoss(o.scores, antecedentLabels(o.cluster, o.ant)) // []
    return o.mentionLoss ? loss.add(o.mentionLoss) : loss
  }

  /**
   * Predicted clusters of a whole document, as [firstWord, lastWord] spans; none for a document
   * without words. Joshi et al.'s head a block at a time (./predict-bounded.ts: memory linear in
   * the length); s2e's pair scores are k × k in one piece.
   */
  predict(d: CorefDoc): [number, number][][] {
    if (d.wordOf.length === 0) return []
    if (this.head.head_type !== 's2e') return predictBounded(this, d)
    const box: {o?: CorefOutput; host?: ArrayLike<number>} = {}
    tf.tidy(() => {
      box.o = this.forward(d, EVAL)
      box.host = box.o.scores.dataSync() // [k, c + 1]
    })
    const o = box.o as CorefOutput
    const antecedent = predictedAntecedents(box.host as ArrayLike<number>, o.ant, o.starts.length)
    return toWords(predictedClusters(o, antecedent, this.head.singletons), d.wordOf)
  }

  dispose(): void {
    this.params.dispose()
  }
}

/** config.json (BERT's keys, architectures BertForCoreference, the head under `coref`) and model.safetensors. */
export async function corefFiles(model: CorefModel): Promise<CheckpointFile[]> {
  const host = await paramsToHost(model.params)
  const config = {...configToJson(model.config), architectures: ['BertForCoreference'], finetuning_task: 'coref', coref: model.head}
  return [
    {name: CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(config, null, 2) + '\n')},
    {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, host, {format: 'pt'})},
  ]
}
