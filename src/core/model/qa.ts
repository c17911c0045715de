import * as tf from '@tensorflow/tfjs'
import {writeFile} from 'node:fs/promises'
import {Rng} from '../util/rng.js'
import type {EncoderHostBatch} from './batch.js'
import {BertEncoder} from './bert.js'
import {CONFIG_FILE, type CheckpointFile, WEIGHTS_FILE, paramsFromTensors, paramsToHost, readConfig} from './checkpoint.js'
import {type BertConfig, configToJson} from './config.js'
import {type ForwardContext, linear} from './layers.js'
import {crossEntropySum} from './loss.js'
import {type ParamSpec, ParamStore, initParams, linearSpecs} from './params.js'
import {type HostTensor, writeSafetensors} from './safetensors.js'
import {resolveVocab} from './vocab-file.js'
import {readWeights} from './weights.js'

/** Hugging Face's name of the start/end layer (BertForQuestionAnswering.qa_outputs). */
export const QA_OUTPUTS = 'qa_outputs'

/** A padded batch of QA windows on the host (row-major [B, T]). */
export interface QaHostBatch extends EncoderHostBatch {
  /** training labels (run_squad start_positions / end_positions), 0 = [CLS] */
  starts: Int32Array | null // [B]
  ends: Int32Array | null // [B]
}

/** Start and end logits of every position. */
export interface QaLogits {
  start: tf.Tensor2D // [B, T]
  end: tf.Tensor2D // [B, T]
}

/**
 * BertForQuestionAnswering (BERT §4.2, run_squad): the encoder, then one Linear(H→2) on the last
 * hidden states giving each token a start and an end score. No pooler: HF's QA model has none.
 */
export class BertForQuestionAnswering {
  static specs(c: BertConfig): ParamSpec[] {
    return [...BertEncoder.specs(c), ...linearSpecs(QA_OUTPUTS, c.hidden_size, 2)]
  }

  /** A freshly initialised model (BERT init; QA head N(0, initializer_range), zero bias). */
  static init(c: BertConfig, seed: number): BertForQuestionAnswering {
    const params = new ParamStore()
    initParams(params, BertForQuestionAnswering.specs(c), c.initializer_range, new Rng(seed))
    return new BertForQuestionAnswering(c, params)
  }

  readonly encoder: BertEncoder

  constructor(readonly config: BertConfig, readonly params: ParamStore) {
    this.encoder = new BertEncoder(params, config)
  }

  /** ids, segments [B, T] int32, mask [B, T] float → start/end logits [B, T] (call inside tf.tidy). */
  forward(ids: tf.Tensor2D, segments: tf.Tensor2D, mask: tf.Tensor2D, ctx: ForwardContext): QaLogits {
    const [B, T] = ids.shape
    const h = this.encoder.forward(ids, segments, mask, ctx) // [B, T, H]
    const both = linear(this.params, QA_OUTPUTS, h) // [B, T, 2]
    // padding can never be an answer: push its scores far down (decoding skips it anyway)
    const pad = tf.scalar(1).sub(mask).mul(-10000) // [B, T]
    const start = both.slice([0, 0, 0], [B, T, 1]).reshape([B, T]).add(pad) as tf.Tensor2D // [B, T]
    const end = both.slice([0, 0, 1], [B, T, 1]).reshape([B, T]).add(pad) as tf.Tensor2D // [B, T]
    return {start, end}
  }

  /** run_squad's loss: (CE(start) + CE(end)) / 2, each the mean over the batch (call inside tf.tidy). */
  loss(b: QaHostBatch, ctx: ForwardContext): tf.Scalar {
    if (!b.starts || !b.ends) throw new Error('a training batch needs start and end labels')
    // spread-ok: three tensors (ids, types, mask)
    const {start, end} = this.forward(...batchTensors(b), ctx) // [B, T] each
    const ceStart = crossEntropySum(start, tf.tensor1d(b.starts, 'int32')) // []
    const ceEnd = crossEntropySum(end, tf.tensor1d(b.ends, 'int32')) // []
    return ceStart.add(ceEnd).div(2 * b.B) as tf.Scalar // []
  }

  dispose(): void {
    this.params.dispose()
  }
}

/** The batch's inputs as tensors: ids, segments [B, T] int32 and mask [B, T] float32. */
export function batchTensors(b: QaHostBatch): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  return [
    tf.tensor2d(b.ids, [b.B, b.T], 'int32'),
    tf.tensor2d(b.segments, [b.B, b.T], 'int32'),
    tf.tensor2d(b.mask, [b.B, b.T], 'float32'),
  ]
}

/** A loaded QA model and what loading it did. */
export interface LoadedQa {
  model: BertForQuestionAnswering
  vocabPath: string
  /** parameters absent from the checkpoint, freshly initialised (the QA head of a pre-trained model) */
  initialised: string[]
  /** checkpoint tensors the QA model does not use (pre-training heads, the pooler) */
  ignored: string[]
}

/**
 * Loads a QA model from a checkpoint directory: a fine-tuned one (with qa_outputs), a span
 * pretrain one or any Hugging Face BERT (config.json + model.safetensors + vocab.txt). The
 * encoder must be complete; a missing QA head is initialised N(0, 0.02) with zero bias.
 */
export async function loadQaModel(dir: string, seed: number, vocab?: string): Promise<LoadedQa> {
  const config = await readConfig(dir)
  const vocabPath = resolveVocab(dir, vocab, config.vocab_size)
  const {tensors, source} = await readWeights(dir)
  return {...qaFromTensors(config, tensors, source, seed), vocabPath}
}

/** A QA model from named host tensors (any HF naming variant, see normaliseNames); a missing QA head is initialised. */
export function qaFromTensors(config: BertConfig, raw: Map<string, HostTensor>, source: string, seed: number): Omit<LoadedQa, 'vocabPath'> {
  const {params, initialised, ignored} = paramsFromTensors(BertForQuestionAnswering.specs(config), raw, source, seed, config.initializer_range)
  return {model: new BertForQuestionAnswering(config, params), initialised, ignored}
}

/** config.json (architectures BertForQuestionAnswering) and model.safetensors (HF names and layouts). */
export async function qaModelFiles(model: BertForQuestionAnswering): Promise<CheckpointFile[]> {
  const host = await paramsToHost(model.params)
  const config = {...configToJson(model.config), architectures: ['BertForQuestionAnswering']}
  return [
    {name: CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify(config, null, 2) + '\n')},
    {name: WEIGHTS_FILE, write: (p) => writeSafetensors(p, host, {format: 'pt'})},
  ]
}
