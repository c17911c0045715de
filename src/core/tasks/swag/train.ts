/**
 * `span finetune swag` (multiple choice; BERT §4.4): every (context, choice) pair is encoded as
 * `[CLS] sent1 [SEP] sent2 ending [SEP]`, the pooled [CLS] vector scored by Linear(H→1), and
 * the scores of an example's choices go through one softmax (cross-entropy on the right choice);
 * the sequence classifier with one output serves as that scorer. Dev accuracy; the best by it.
 */
import * as tf from '@tensorflow/tfjs'
import type {BertForSequenceClassification, ClsHostBatch} from '../../model/classifier.js'
import {EVAL, type ForwardContext} from '../../model/layers.js'
import {crossEntropySum} from '../../model/loss.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import type {FinetuneSettings} from '../../train/finetune-config.js'
import {type ClassUnit, classifierCheckpoint, collateUnits, pairUnit} from '../common/classify.js'
import type {SwagExample} from './read.js'
import {pushAll} from '../../util/arrays.js'

/** One example: a unit per choice (all with the same number of choices) and the right one. */
export interface ChoiceUnit {
  choices: ClassUnit[]
  label: number | null
}

export interface ChoiceBatch {
  pairs: ClsHostBatch // [B·K rows]
  K: number
  labels: Int32Array | null // [B]
}

export function swagUnits(examples: SwagExample[], tok: WordPieceTokenizer, maxLen: number): ChoiceUnit[] {
  return examples.map((e) => ({choices: e.endings.map((end) => pairUnit(tok, e.context, `${e.start} ${end}`.trim(), maxLen, null)), label: e.label}))
}

export function collateChoices(us: ChoiceUnit[], padId: number): ChoiceBatch {
  const K = us[0].choices.length
  if (us.some((u) => u.choices.length !== K)) throw new Error('every example of a batch needs the same number of choices')
  const labeled = us.every((u) => u.label !== null)
  return {
    pairs: collateUnits(
      us.flatMap((u) => u.choices),
      padId,
    ),
    K,
    labels: labeled ? Int32Array.from(us, (u) => u.label as number) : null,
  }
}

/** Choice scores [B, K] (call inside tf.tidy). */
export function choiceScores(model: BertForSequenceClassification, b: ChoiceBatch, ctx: ForwardContext): tf.Tensor2D {
  return model.forward(b.pairs, ctx).reshape([b.pairs.B / b.K, b.K]) // [B, K]
}

export async function predictChoices(model: BertForSequenceClassification, units: ChoiceUnit[], batchSize: number, padId: number): Promise<number[]> {
  const out: number[] = []
  for (let at = 0; at < units.length; at += batchSize) {
    const b = collateChoices(units.slice(at, at + batchSize), padId)
    const y = tf.tidy(() => choiceScores(model, b, EVAL).argMax(1)) // [B]
    pushAll(out, await y.data())
    y.dispose()
  }
  return out
}

export interface SwagRun {
  config: FinetuneSettings
  model: BertForSequenceClassification
  tokenizer: WordPieceTokenizer
  vocabPath: string
}

export function swagAdapter(run: SwagRun, train: ChoiceUnit[], dev: ChoiceUnit[] | null): TaskAdapter<ChoiceUnit, ChoiceBatch> {
  const pad = run.tokenizer.vocab.special.pad
  const evaluate = async (): Promise<DevScores | null> => {
    if (!dev) return null
    const pred = await predictChoices(run.model, dev, run.config['batch-size'], pad)
    return {accuracy: pred.filter((p, i) => p === dev[i].label).length / dev.length}
  }
  return {
    task: 'swag',
    params: run.model.params,
    config: run.model.config,
    units: train,
    tokens: (u) => u.choices.reduce((n, c) => n + c.ids.length, 0),
    collate: (us) => collateChoices(us, pad),
    loss: (b, ctx) => {
      const scores = choiceScores(run.model, b, ctx) // [B, K]
      return crossEntropySum(scores, tf.tensor1d(b.labels as Int32Array, 'int32')).div(scores.shape[0]) as tf.Scalar
    },
    evaluate,
    metric: 'accuracy',
    higherIsBetter: true,
    files: (state) => classifierCheckpoint(run.model, run.vocabPath, run.config, state),
  }
}
