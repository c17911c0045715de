/**
 * Token classification (BERT §4.3, CoNLL-2003 NER; Hugging Face BertForTokenClassification):
 * the encoder's last hidden states → dropout → `classifier` Linear(H→C) at every position. The
 * loss is the cross-entropy averaged over the positions that carry a label (label ≥ 0: each
 * word's first sub-token); the others (-1) are ignored, as PyTorch's ignore_index.
 * With Span Fine-tuning's token-level variant (Bao et al. §5.4; docs/algorithms.md#span-fine-tuning)
 * each token's span-CNN vector is concatenated after its hidden state (BAORONGZHOU/span-fine-tuning
 * @bca4358, modeling.py LaSAForNER.forward under --do_concat) and the classifier takes 2H inputs.
 */
import * as tf from '@tensorflow/tfjs'
import {writeFile} from 'node:fs/promises'
import {gatherRows} from '../engine/gather.js'
import type {EncoderHostBatch} from './batch.js'
import {BertEncoder} from './bert.js'
import {CONFIG_FILE, type CheckpointFile, WEIGHTS_FILE, paramsFromTensors, paramsToHost} from './checkpoint.js'
import {CLASSIFIER, type HeadConfig, classifierConfigJson} from './classifier.js'
import type {BertConfig} from './config.js'
import {type ForwardContext, dropout, linear} from './layers.js'
import {crossEntropySum} from './loss.js'
import {type ParamSpec, ParamStore, initParams, linearSpecs} from './params.js'
import {Rng} from '../util/rng.js'
import {type HostTensor, writeSafetensors} from './safetensors.js'
import {type SpanIndex, spanFtSpecs, spanFtTokenForward} from './span-ft.js'

/** A padded batch with a label per position (-1: ignored). */
export interface TokenHostBatch extends EncoderHostBatch {
  labels: Int32Array | null // [B·T]
  /** the span index (with token slots) of a Span Fine-tuning model */
  spans?: SpanIndex | null
}

export class BertForTokenClassification {
  static specs(c: BertConfig, numLabels: number, spanFt = false): ParamSpec[] {
    const inputs = spanFt ? 2 * c.hidden_size : c.hidden_size
    return [...BertEncoder.specs(c), ...linearSpecs(CLASSIFIER, inputs, numLabels), ...(spanFt ? spanFtSpecs(c.hidden_size, 'token') : [])]
  }

  static init(c: BertConfig, h: HeadConfig, seed: number): BertForTokenClassification {
    const params = new ParamStore()
    initParams(params, BertForTokenClassification.specs(c, h.num_labels, h.span_ft !== null), c.initializer_range, new Rng(seed))
    return new BertForTokenClassification(c, h, params)
  }

  /** From checkpoint tensors (a pre-trained encoder: the classifier starts afresh). */
  static fromTensors(
    c: BertConfig,
    h: HeadConfig,
    raw: Map<string, HostTensor>,
    source: string,
    seed: number,
    strict = false,
  ): {model: BertForTokenClassification; initialised: string[]} {
    const fits = (spec: ParamSpec, t: HostTensor) => t.shape.length === spec.shape.length && t.shape.every((d, i) => d === spec.shape[i])
    const {params, initialised} = paramsFromTensors(
      BertForTokenClassification.specs(c, h.num_labels, h.span_ft !== null),
      raw,
      source,
      seed,
      c.initializer_range,
      fits,
      strict,
    )
    return {model: new BertForTokenClassification(c, h, params), initialised}
  }

  readonly encoder: BertEncoder

  constructor(
    readonly config: BertConfig,
    readonly head: HeadConfig,
    readonly params: ParamStore,
  ) {
    this.encoder = new BertEncoder(params, config)
  }

  /** Logits [B·T, C] (call inside tf.tidy). */
  forward(b: TokenHostBatch, ctx: ForwardContext): tf.Tensor2D {
    const ids = tf.tensor2d(b.ids, [b.B, b.T], 'int32')
    const segments = tf.tensor2d(b.segments, [b.B, b.T], 'int32')
    const h = this.encoder.forward(ids, segments, tf.tensor2d(b.mask, [b.B, b.T]), ctx) // [B, T, H]
    const rate = this.config.hidden_dropout_prob
    let t = h.reshape([b.B * b.T, this.config.hidden_size]) as tf.Tensor2D // [B·T, H]
    if (this.head.span_ft) {
      if (!b.spans) throw new Error("a Span Fine-tuning model needs the batch's span index")
      t = tf.concat([t, spanFtTokenForward(this.params, h, b.spans, rate, ctx)], 1) // [B·T, 2H] = t ◇ span
    }
    const x = dropout(t, rate, ctx) // [B·T, H or 2H]
    return linear(this.params, CLASSIFIER, x) as tf.Tensor2D // [B·T, C]
  }

  /** Mean cross-entropy over the labelled positions (call inside tf.tidy). */
  loss(b: TokenHostBatch, ctx: ForwardContext): tf.Scalar {
    if (!b.labels) throw new Error('a token classification batch needs labels')
    const at: number[] = []
    const y: number[] = []
    b.labels.forEach((l, i) => l >= 0 && (at.push(i), y.push(l)))
    const logits = this.forward(b, ctx) // [B·T, C]
    if (at.length === 0) return logits.sum().mul(0) as tf.Scalar // [] no labelled position: no gradient
    const picked = gatherRows(logits, tf.tensor1d(at, 'int32')) as tf.Tensor2D // [N, C]
    return crossEntropySum(picked, tf.tensor1d(y, 'int32')).div(at.length) as tf.Scalar // []
  }

  dispose(): void {
    this.params.dispose()
  }
}

/** config.json (BertForTokenClassification's keys) and model.safetensors. */
export async function tokenClassifierFiles(model: BertForTokenClassification): Promise<CheckpointFile[]> {
  const host = await paramsToHost(model.params)
  const config = {...classifierConfigJson(model.config, model.head), architectures: ['BertForTokenClassification'], problem_type: undefined}
  return [
    {name: CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(config, null, 2) + '\n')},
    {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, host, {format: 'pt'})},
  ]
}
