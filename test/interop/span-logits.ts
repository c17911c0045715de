/**
 * span's own logits of a fine-tuned checkpoint on given ids, through the loaders and model classes
 * `span predict` uses (dropout off): what the interop tests compare transformers' head classes with.
 */
import * as tf from '@tensorflow/tfjs'
import {expect} from 'vitest'
import {headFromJson, loadClassifier, readConfigJson} from '../../src/core/model/classifier.js'
import {EVAL} from '../../src/core/model/layers.js'
import {loadQaModel} from '../../src/core/model/qa.js'
import {nerModel} from '../../src/core/tasks/ner/train.js'

/** One model input: ids and token types [T] (for multiple choice the K choices one after another, each T/K long), mask 1/0. */
export interface Feature {
  ids: number[]
  segments: number[]
  mask?: number[]
}

const rows = (f: Feature, K = 1) => {
  const T = f.ids.length / K
  return {B: K, T, ids: Int32Array.from(f.ids), segments: Int32Array.from(f.segments), mask: Float32Array.from(f.mask ?? f.ids.map(() => 1))}
}

/** Per feature: QA [start…, end…] (2T), sequence classification [C], token classification [T·C], multiple choice [K]. */
export async function spanLogits(task: string, dir: string, features: Feature[], choices?: number): Promise<number[][]> {
  const {json} = await readConfigJson(dir)
  if (task === 'squad') {
    const {model, initialised} = await loadQaModel(dir, 0)
    expect(initialised).toEqual([])
    const out = features.map((f) => {
      const b = rows(f)
      const t = tf.tidy(() => {
        const {start, end} = model.forward(
          tf.tensor2d(b.ids, [1, b.T], 'int32'),
          tf.tensor2d(b.segments, [1, b.T], 'int32'),
          tf.tensor2d(b.mask, [1, b.T]),
          EVAL,
        ) // [1, T] each
        return tf.concat([start, end], 1) // [1, 2T]
      })
      const v = Array.from(t.dataSync())
      t.dispose()
      return v
    })
    model.params.dispose()
    return out
  }
  if (task === 'ner') {
    const labels = Object.values(json.id2label as Record<string, string>)
    const model = await nerModel(dir, undefined, {num_labels: labels.length, labels, finetuning_task: 'ner', span_ft: null}, 0, 8, 0, () => {})
    const out = features.map((f) => tf.tidy(() => Array.from(model.forward({...rows(f), labels: null}, EVAL).dataSync()))) // [T·C]
    model.params.dispose()
    return out
  }
  const {model, initialised} = await loadClassifier(dir, headFromJson(json, dir), 0)
  expect(initialised).toEqual([])
  const out = features.map((f) =>
    tf.tidy(() => Array.from(model.forward({...rows(f, choices ?? 1), spans: null, classes: null, targets: null}, EVAL).dataSync())),
  ) // [C] or [K·1]
  model.dispose()
  return out
}
