/**
 * Sentence(-pair) classification and regression (BERT §4.1; Hugging Face
 * BertForSequenceClassification): the encoder, the pooler tanh(dense(h[CLS])), dropout, then
 * `classifier` Linear(H→C). C = 1 is regression (STS-B) with a mean-squared-error loss, else
 * softmax cross-entropy averaged over the batch. With Span Fine-tuning (Bao et al. §3.2) the
 * span CNN's sentence vector s is concatenated with [CLS]'s vector (`span_ft.cls`: raw t₁ as
 * §3.2 writes s* = s ◇ t₁, or the pooler's output, which the reference's PASent concatenates
 * under --do_concat) and the classifier takes 2H inputs (weight [C, 2H]: columns 0..H−1 see
 * [CLS], H..2H−1 see s); with `cls: 'none'` (the reference's run_glue.sh, no --do_concat) s alone.
 */
import * as tf from '@tensorflow/tfjs'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {Rng} from '../util/rng.js'
import {SpanError} from '../stream/errors.js'
import type {EncoderHostBatch} from './batch.js'
import {BertEncoder, BertPooler} from './bert.js'
import {CONFIG_FILE, type CheckpointFile, WEIGHTS_FILE, paramsFromTensors, paramsToHost} from './checkpoint.js'
import {type BertConfig, configFromJson, configToJson} from './config.js'
import {type ForwardContext, dropout, linear} from './layers.js'
import {crossEntropySum} from './loss.js'
import {type ParamSpec, ParamStore, initParams, linearSpecs} from './params.js'
import {type HostTensor, writeSafetensors} from './safetensors.js'
import {readWeights} from './weights.js'
import {type SpanFtConfig, type SpanIndex, spanFtForward, spanFtSettings, spanFtSpecs} from './span-ft.js'
import {parseJsonText} from '../util/json.js'
import {readError} from '../util/fs-errors.js'
import {readTextWhole} from '../util/read-whole.js'

export const CLASSIFIER = 'classifier'

/** The head's settings, saved in config.json in Hugging Face's keys (plus `span_ft`). */
export interface HeadConfig {
  num_labels: number
  /** class names in order; empty for regression */
  labels: string[]
  finetuning_task: string
  span_ft: SpanFtConfig | null
}

/** A padded batch on the host (row-major [B, T]); labels only for training. */
export interface ClsHostBatch extends EncoderHostBatch {
  spans: SpanIndex | null
  classes: Int32Array | null // [B] classification labels
  targets: Float32Array | null // [B] regression labels
}

export class BertForSequenceClassification {
  static specs(c: BertConfig, h: HeadConfig): ParamSpec[] {
    const inputs = h.span_ft && spanFtSettings(h.span_ft).cls !== 'none' ? 2 * c.hidden_size : c.hidden_size
    return [
      ...BertEncoder.specs(c), ...BertPooler.specs(c),
      ...linearSpecs(CLASSIFIER, inputs, h.num_labels),
      ...(h.span_ft ? spanFtSpecs(c.hidden_size) : []),
    ]
  }

  /** A randomly initialised model (BERT init: N(0, initializer_range), zero biases, LayerNorm 1/0). */
  static init(c: BertConfig, h: HeadConfig, seed: number): BertForSequenceClassification {
    const params = new ParamStore()
    initParams(params, BertForSequenceClassification.specs(c, h), c.initializer_range, new Rng(seed))
    return new BertForSequenceClassification(c, h, params)
  }

  readonly encoder: BertEncoder
  private readonly pooler: BertPooler

  constructor(readonly config: BertConfig, readonly head: HeadConfig, readonly params: ParamStore) {
    this.encoder = new BertEncoder(params, config)
    this.pooler = new BertPooler(params)
  }

  /** Logits [B, C] (call inside tf.tidy). */
  forward(b: ClsHostBatch, ctx: ForwardContext): tf.Tensor2D {
    const ids = tf.tensor2d(b.ids, [b.B, b.T], 'int32')
    const segments = tf.tensor2d(b.segments, [b.B, b.T], 'int32')
    const h = this.encoder.forward(ids, segments, tf.tensor2d(b.mask, [b.B, b.T]), ctx) // [B, T, H]
    const x = this.head.span_ft ? this.withSpans(h, b, this.head.span_ft, ctx) : this.pooler.forward(h) // [B, H or 2H]
    const dropped = dropout(x, this.config.hidden_dropout_prob, ctx) // [B, H or 2H]
    return linear(this.params, CLASSIFIER, dropped) as tf.Tensor2D // [B, C]
  }

  /** [CLS] ◇ s [B, 2H] (or s [B, H]) of Span Fine-tuning (§3.2). */
  private withSpans(h: tf.Tensor3D, b: ClsHostBatch, sf: SpanFtConfig, ctx: ForwardContext): tf.Tensor2D {
    if (!b.spans) throw new Error('a Span Fine-tuning model needs the batch\'s span index')
    const s = spanFtForward(this.params, h, b.spans, sf, this.config.hidden_dropout_prob, ctx) // [B, H]
    const cls = spanFtSettings(sf).cls
    if (cls === 'none') return s
    const t1 = cls === 'raw' ? (h.slice([0, 0, 0], [h.shape[0], 1, h.shape[2]]).reshape([h.shape[0], h.shape[2]]) as tf.Tensor2D) : this.pooler.forward(h) // [B, H]
    return tf.concat([t1, s], 1) as tf.Tensor2D // [B, 2H]
  }

  /** Mean cross-entropy, or mean squared error for regression (call inside tf.tidy). */
  loss(b: ClsHostBatch, ctx: ForwardContext): tf.Scalar {
    const logits = this.forward(b, ctx) // [B, C]
    if (this.head.num_labels === 1) {
      if (!b.targets) throw new Error('a regression batch needs targets')
      return logits.reshape([b.B]).sub(tf.tensor1d(b.targets)).square().mean() as tf.Scalar // []
    }
    if (!b.classes) throw new Error('a classification batch needs labels')
    return crossEntropySum(logits, tf.tensor1d(b.classes, 'int32')).div(b.B) as tf.Scalar // []
  }

  dispose(): void {
    this.params.dispose()
  }
}

/** A loaded model and what loading it did. */
export interface LoadedClassifier {
  model: BertForSequenceClassification
  /** head parameters absent from the checkpoint (or of another shape), freshly initialised */
  initialised: string[]
  /** checkpoint tensors the model does not use (pre-training heads) */
  ignored: string[]
}

/** The head a fine-tuned checkpoint's config.json describes (num_labels, id2label, span_ft). */
export function headFromJson(json: Record<string, unknown>, source: string): HeadConfig {
  const n = json.num_labels
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new SpanError(`${source}: no num_labels (not a sequence classification checkpoint)`)
  const id2label = (json.id2label ?? {}) as Record<string, string>
  const labels = n === 1 ? [] : Array.from({length: n}, (_, i) => String(id2label[String(i)] ?? `LABEL_${i}`))
  const sf = json.span_ft as SpanFtConfig | null | undefined
  return {num_labels: n, labels, finetuning_task: String(json.finetuning_task ?? ''), span_ft: sf ?? null}
}

/** Reads config.json of a checkpoint directory: the encoder config and the raw JSON. */
export async function readConfigJson(dir: string): Promise<{config: BertConfig; json: Record<string, unknown>}> {
  const path = join(dir, CONFIG_FILE)
  let text: string
  try {
    text = await readTextWhole(path, 'config')
  } catch (err) {
    if (err instanceof SyntaxError) throw new SpanError(`${path}: ${err.message}`)
    throw (err as {code?: string}).code === 'ENOENT' ? new SpanError(`${dir}: not a checkpoint directory (no ${CONFIG_FILE})`) : readError(err, path)
  }
  const json = parseJsonText(text, path) as Record<string, unknown>
  return {config: configFromJson(json, path), json}
}

/**
 * Loads the encoder (and pooler, classifier, span CNN where present with the right shapes)
 * from a checkpoint directory: a span pretrain checkpoint, a Hugging Face BERT, or a model
 * fine-tuned here. What is missing outside the encoder starts N(0, initializer_range) / zeros.
 */
export async function loadClassifier(dir: string, head: HeadConfig, seed: number, strict = false): Promise<LoadedClassifier> {
  const {config} = await readConfigJson(dir)
  const {tensors, source} = await readWeights(dir)
  return classifierFromTensors(config, head, tensors, source, seed, strict)
}

export function classifierFromTensors(config: BertConfig, head: HeadConfig, raw: Map<string, HostTensor>, source: string, seed: number, strict = false): LoadedClassifier {
  // a head of another shape (a checkpoint fine-tuned for another label count) starts afresh
  const {params, initialised, ignored} = paramsFromTensors(BertForSequenceClassification.specs(config, head), raw, source, seed, config.initializer_range, sameShape, strict)
  return {model: new BertForSequenceClassification(config, head, params), initialised, ignored}
}

function sameShape(spec: ParamSpec, t: HostTensor): boolean {
  return t.shape.length === spec.shape.length && t.shape.every((d, i) => d === spec.shape[i])
}

/** config.json in BertForSequenceClassification's keys (num_labels, id2label, label2id, problem_type). */
export function classifierConfigJson(c: BertConfig, h: HeadConfig): Record<string, unknown> {
  const regression = h.num_labels === 1
  const id2label = regression ? {0: 'LABEL_0'} : Object.fromEntries(h.labels.map((l, i) => [String(i), l]))
  const label2id = regression ? {LABEL_0: 0} : Object.fromEntries(h.labels.map((l, i) => [l, i]))
  return {
    ...configToJson(c), architectures: ['BertForSequenceClassification'], num_labels: h.num_labels, id2label, label2id,
    problem_type: regression ? 'regression' : 'single_label_classification', finetuning_task: h.finetuning_task, span_ft: h.span_ft,
  }
}

/** config.json and model.safetensors (HF names and layouts) of a fine-tuned model. */
export async function classifierFiles(model: BertForSequenceClassification): Promise<CheckpointFile[]> {
  const host = await paramsToHost(model.params)
  const config = classifierConfigJson(model.config, model.head)
  return [
    {name: CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(config, null, 2) + '\n')},
    {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, host, {format: 'pt'})},
  ]
}
