import * as tf from '@tensorflow/tfjs'
import {Rng} from '../util/rng.js'
import {SpanError} from '../stream/errors.js'
import type {Batch} from './batch.js'
import {BertEncoder, BertPooler} from './bert.js'
import type {BertConfig} from './config.js'
import {MlmHead, NspHead, SboHead, decoderWeight} from './heads.js'
import type {ForwardContext} from './layers.js'
import {crossEntropySum} from './loss.js'
import {CHUNK_ABOVE, chunked, decoderLoss} from './decoder-loss.js'
import {dense} from './layers.js'
import {type ParamSpec, ParamStore, initParams} from './params.js'

export interface PretrainOutputs {
  mlmLogits: tf.Tensor2D // [Nm, V]
  sboLogits: tf.Tensor2D | null // [Ns, V]
  nspLogits: tf.Tensor2D | null // [B, 2]
}

/** Scalar losses of one batch; `total` is what is minimised. */
export interface PretrainLosses {
  total: tf.Scalar
  mlm: tf.Scalar
  sbo: tf.Scalar | null
  nsp: tf.Scalar | null
}

/**
 * The encoder with its pre-training heads (BertForPreTraining plus SpanBERT's SBO head).
 * Parameters live in a ParamStore under Hugging Face names; the pooler is always present
 * (HF checkpoints carry it), the SBO and NSP heads only when their objective is on.
 */
export class SpanBertForPreTraining {
  /** Every parameter the config asks for, in a fixed order (initialisation and checkpoints follow it). */
  static specs(c: BertConfig): ParamSpec[] {
    return [
      ...BertEncoder.specs(c),
      ...BertPooler.specs(c),
      ...MlmHead.specs(c),
      ...(c.objectives.includes('sbo') ? SboHead.specs(c) : []),
      ...(c.objectives.includes('nsp') ? NspHead.specs(c) : []),
    ]
  }

  /** A freshly initialised model (BERT init: N(0, initializer_range), zero biases, LayerNorm 1/0). */
  static init(c: BertConfig, seed: number): SpanBertForPreTraining {
    const params = new ParamStore()
    initParams(params, SpanBertForPreTraining.specs(c), c.initializer_range, new Rng(seed))
    return new SpanBertForPreTraining(c, params)
  }

  readonly encoder: BertEncoder
  private readonly pooler: BertPooler
  private readonly mlm: MlmHead
  private readonly sbo: SboHead | null
  private readonly nsp: NspHead | null

  constructor(readonly config: BertConfig, readonly params: ParamStore) {
    this.encoder = new BertEncoder(params, config)
    this.pooler = new BertPooler(params)
    this.mlm = new MlmHead(params, config)
    this.sbo = config.objectives.includes('sbo') ? new SboHead(params, config) : null
    this.nsp = config.objectives.includes('nsp') ? new NspHead(params) : null
  }

  /** Logits of every head that is on (call inside tf.tidy). */
  forward(b: Batch, ctx: ForwardContext): PretrainOutputs {
    const h = this.encoder.forward(b.ids, b.segments, b.mask, ctx) // [B, T, H]
    const hFlat = h.reshape([b.B * b.T, this.config.hidden_size]) as tf.Tensor2D // [B·T, H]
    const dec = decoderWeight(this.params) // tied decoder weight
    const mlmLogits = this.mlm.forward(hFlat, b.mlmPos, dec) // [Nm, V]
    const sboLogits = this.sbo && b.nSbo > 0 ? this.sbo.forward(hFlat, b.sboLeft, b.sboRight, b.sboRel, dec) : null // [Ns, V]
    const nspLogits = this.nsp ? this.nsp.forward(this.pooler.forward(h)) : null // [B, 2]
    return {mlmLogits, sboLogits, nspLogits}
  }

  /**
   * The pre-training loss terms of one training batch (pretrainingTerms, the same sums): a decoder
   * whose logits would exceed `chunkAbove` floats (CHUNK_ABOVE) is scored in chunks (decoder-loss.ts)
   * and never holds them whole, the others as forward() gives them (call inside tf.tidy, under the tape).
   */
  trainingTerms(b: Batch, ctx: ForwardContext, norm?: LossCounts, chunkAbove = CHUNK_ABOVE): {total: tf.Scalar; stats: tf.Tensor1D} {
    const h = this.encoder.forward(b.ids, b.segments, b.mask, ctx) // [B, T, H]
    const hFlat = h.reshape([b.B * b.T, this.config.hidden_size]) as tf.Tensor2D // [B·T, H]
    const dec = decoderWeight(this.params)
    const V = this.config.vocab_size
    const head = (x: () => tf.Tensor2D, bias: string, labels: tf.Tensor1D, n: number): HeadTerm => {
      if (!chunked(n, V, chunkAbove)) return {logits: dense(x(), dec.w, this.params.get(bias) as tf.Tensor1D)} // [n, V]
      return {sums: decoderLoss(x(), dec.w, this.params.get(bias) as tf.Tensor1D, labels)} // [2]
    }
    const [mlmRows, sboRows] = [b.mlmPos.shape[0], b.sboLeft.shape[0]] // nMlm, nSbo unless padded (padTargets)
    const mlm = head(() => this.mlm.hidden(hFlat, b.mlmPos), MlmHead.bias, b.mlmLabels, mlmRows)
    const sbo = this.sbo && sboRows > 0 ? head(() => (this.sbo as SboHead).hidden(hFlat, b.sboLeft, b.sboRight, b.sboRel), SboHead.bias, b.sboLabels, sboRows) : null
    const nsp = this.nsp ? {logits: this.nsp.forward(this.pooler.forward(h))} : null // [B, 2]
    return termsOf({mlm, sbo, nsp}, b, norm)
  }

  /**
   * The pre-training loss terms of one batch (pretrainingTerms, the one definition, docs/algorithms.md#pre-training-loss; call inside
   * tf.tidy). A batch without SBO targets contributes no SBO term.
   */
  losses(b: Batch, ctx: ForwardContext): PretrainLosses {
    if (b.nMlm === 0) throw new SpanError('a batch without MLM targets cannot be trained on')
    if (this.nsp && !b.nextLabels) throw new SpanError('the nsp objective needs examples with a "next" field (span block --pairs)')
    const t = pretrainingTerms(this.forward(b, ctx), b)
    const mean = (j: number, n: number): tf.Scalar => t.stats.slice([3 * j], [1]).div(n).reshape([]) as tf.Scalar // []
    const sbo = this.sbo && b.nSbo > 0 ? mean(1, b.nSbo) : null
    return {total: t.total, mlm: mean(0, b.nMlm), sbo, nsp: this.nsp ? mean(2, b.B) : null}
  }

  /** The variables a step trains: every parameter (those a batch does not reach get no gradient). */
  trainableVariables(): tf.Variable[] {
    return this.params.entries().map(([, v]) => v)
  }

  dispose(): void {
    this.params.dispose()
  }
}

/** Denominators of a batch's loss terms: its own counts, or a data-parallel global batch's. */
export interface LossCounts {
  mlm: number
  sbo: number
  rows: number
}

/**
 * The loss the model minimises, from its outputs: MLM_sum/n_mlm + SBO_sum/n_sbo (SpanBERT
 * reference `span_bert_loss`) + NSP mean, and in the same vector the argmax hits accuracy needs,
 * so that one read brings everything to the host:
 * stats = [mlm_sum, mlm_correct, n_mlm, sbo_sum, sbo_correct, n_sbo, nsp_sum, nsp_correct, n_nsp].
 * The one definition of the pre-training loss: `span pretrain`'s step, its evaluation and the
 * golden PyTorch test all go through it.
 */
export function pretrainingTerms(out: PretrainOutputs, b: Batch, norm?: LossCounts): {total: tf.Scalar; stats: tf.Tensor1D} {
  const of = (logits: tf.Tensor2D | null) => (logits ? {logits} : null)
  return termsOf({mlm: of(out.mlmLogits) as HeadTerm, sbo: of(out.sboLogits), nsp: of(out.nspLogits)}, b, norm)
}

/** A head's logits [N, C], or its [Σ cross-entropy, hits] already summed (decoderLoss). */
type HeadTerm = {logits: tf.Tensor2D; sums?: undefined} | {sums: tf.Tensor1D; logits?: undefined}

/** The loss and stats vector of pretrainingTerms from each head's term. */
function termsOf(out: {mlm: HeadTerm; sbo: HeadTerm | null; nsp: HeadTerm | null}, b: Batch, norm?: LossCounts): {total: tf.Scalar; stats: tf.Tensor1D} {
  const zero = tf.scalar(0)
  // rows: the labels' length, n: the real targets among them (fewer when padded with label −1: padTargets)
  const term = (t: HeadTerm | null, labels: tf.Tensor1D | null, n: number): tf.Scalar[] => {
    if (!t || !labels || labels.shape[0] === 0) return [zero, zero, tf.scalar(0)]
    if (t.sums) return [t.sums.slice([0], [1]).reshape([]) as tf.Scalar, t.sums.slice([1], [1]).reshape([]) as tf.Scalar, tf.scalar(n)]
    const ce = crossEntropySum(t.logits, labels) // []
    const hits = tf.argMax(t.logits, -1).toInt().equal(labels).sum().toFloat() as tf.Scalar // []
    return [ce, hits, tf.scalar(n)]
  }
  const mlm = term(out.mlm, b.mlmLabels, b.nMlm)
  const sbo = term(out.sbo, b.sboLabels, b.nSbo)
  const nsp = term(out.nsp, b.nextLabels, b.B)
  const n = norm ?? {mlm: b.nMlm, sbo: b.nSbo, rows: b.B} // data-parallel: the global batch's counts (README "Training on many processes")
  let total = mlm[0].div(Math.max(n.mlm, 1)) as tf.Scalar // []
  if (out.sbo && b.sboLabels.shape[0] > 0) total = total.add(sbo[0].div(Math.max(n.sbo, 1))) // padded without a real target: + 0
  if (out.nsp && b.nextLabels) total = total.add(nsp[0].div(n.rows))
  return {total, stats: tf.stack([...mlm, ...sbo, ...nsp]) as tf.Tensor1D} // [9]
}
