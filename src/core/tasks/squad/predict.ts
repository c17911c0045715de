/**
 * Batched SQuAD inference (run_squad's predict loop, then write_predictions per question):
 * features are built lazily, one question at a time, as batches need them, so only a batch's
 * windows (and the questions they belong to) are ever held; dropout is off.
 */
import * as tf from '@tensorflow/tfjs'
import {EVAL} from '../../model/layers.js'
import {type BertForQuestionAnswering, type QaHostBatch, batchTensors} from '../../model/qa.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {SquadExample} from './dataset.js'
import {type DecodeOptions, type FeatureLogits, type QuestionPrediction, decodeQuestion} from './decode.js'
import type {SquadFeature, TokenizedDoc, WindowOptions} from './features.js'
import {SquadFeaturizer} from './featurizer.js'
import {maxOf} from '../../util/arrays.js'

/** What collation needs of a window: its ids, where the passage starts (segment 1) and, to train, labels. */
export interface WindowInput {
  ids: ArrayLike<number>
  /** positions before it are `[CLS] question [SEP]` (segment 0), from it on the passage (segment 1) */
  docOffset: number
  start: number
  end: number
}

/** Pads windows to the longest of them (a QaHostBatch); labels only when asked. */
export function collateWindows(windows: WindowInput[], padId: number, labels: boolean): QaHostBatch {
  const B = windows.length
  const T = maxOf(windows.map((w) => w.ids.length))
  const ids = new Int32Array(B * T).fill(padId)
  const segments = new Int32Array(B * T)
  const mask = new Float32Array(B * T)
  windows.forEach((w, b) => {
    for (let t = 0; t < w.ids.length; t++) {
      ids[b * T + t] = w.ids[t]
      segments[b * T + t] = t >= w.docOffset ? 1 : 0
      mask[b * T + t] = 1
    }
  })
  const starts = labels ? Int32Array.from(windows, (w) => w.start) : null
  const ends = labels ? Int32Array.from(windows, (w) => w.end) : null
  return {B, T, ids, segments, mask, starts, ends}
}

/** Start/end logits of each window of a batch (dropout off), cut to the window's own tokens. */
export async function windowLogits(model: BertForQuestionAnswering, windows: WindowInput[], padId: number): Promise<FeatureLogits[]> {
  const b = collateWindows(windows, padId, false)
  const both = tf.tidy(() => {
    // spread-ok: three tensors (ids, types, mask)
    const {start, end} = model.forward(...batchTensors(b), EVAL) // [B, T] each
    return tf.stack([start, end]) // [2, B, T]
  })
  const data = (await both.data()) as Float32Array
  both.dispose()
  const {B, T} = b
  return windows.map((w, i) => ({
    start: data.subarray(i * T, i * T + w.ids.length),
    end: data.subarray((B + i) * T, (B + i) * T + w.ids.length),
  }))
}

export interface PredictOptions {
  windows: WindowOptions
  decode: Partial<DecodeOptions>
  batchSize: number
  /** called after each batch with the number of questions decoded so far */
  onProgress?: (questionsDone: number) => void
}

/** A question whose windows are waiting for (some of) their logits. */
interface Pending {
  qid: string
  doc: TokenizedDoc
  features: SquadFeature[]
  logits: FeatureLogits[]
  left: number
}

/** Predictions for every example, in dataset order (see the module comment). */
export async function predictSquad(model: BertForQuestionAnswering, tokenizer: WordPieceTokenizer, examples: SquadExample[], o: PredictOptions): Promise<QuestionPrediction[]> {
  const fz = new SquadFeaturizer(tokenizer, o.windows)
  const basic = (t: string) => tokenizer.basic(t)
  const padId = tokenizer.vocab.special.pad
  const out: QuestionPrediction[] = []
  const pending: Pending[] = []
  let queue: {p: Pending; k: number}[] = []
  const flush = async () => {
    const logits = await windowLogits(model, queue.map(({p, k}) => p.features[k]), padId)
    queue.forEach(({p, k}, i) => {
      p.logits[k] = logits[i]
      p.left--
    })
    queue = []
    while (pending.length > 0 && pending[0].left === 0) {
      const p = pending.shift() as Pending
      out.push(decodeQuestion(p.qid, p.doc, p.features, p.logits, basic, o.decode))
    }
    o.onProgress?.(out.length)
  }
  for (let i = 0; i < examples.length; i++) {
    const ex = examples[i]
    const {features} = fz.features(ex, i, false)
    const p: Pending = {qid: ex.id, doc: fz.doc(ex.context), features, logits: new Array(features.length), left: features.length}
    pending.push(p)
    for (let k = 0; k < features.length; k++) {
      queue.push({p, k})
      if (queue.length === o.batchSize) await flush()
    }
  }
  if (queue.length > 0) await flush()
  // only questions without windows (an empty passage) can be left: decode them as they are
  for (const p of pending.splice(0)) out.push(decodeQuestion(p.qid, p.doc, p.features, p.logits, basic, o.decode))
  return out
}
