/**
 * Batched GLUE inference (dropout off): a class number per example (argmax of the logits) or,
 * for regression (STS-B), the score; and the task's scores against gold labels.
 */
import * as tf from '@tensorflow/tfjs'
import {glueScores, type GlueScores} from '../../metrics/glue-score.js'
import type {BertForSequenceClassification} from '../../model/classifier.js'
import {EVAL} from '../../model/layers.js'
import {type GlueFeature, collateGlue} from './features.js'
import type {GlueTask} from './tasks.js'
import {pushAll} from '../../util/arrays.js'

/** r and l of the model's span CNN, or null without one. */
export function spanLimits(model: BertForSequenceClassification): {r: number; l: number} | null {
  const sf = model.head.span_ft
  return sf ? {r: sf.max_spans, l: sf.max_span_tokens} : null
}

/** One value per feature: the predicted class number, or the regression output. */
export async function predictValues(model: BertForSequenceClassification, features: GlueFeature[], batchSize: number, padId: number): Promise<number[]> {
  const out: number[] = []
  const regression = model.head.num_labels === 1
  for (let at = 0; at < features.length; at += batchSize) {
    const b = collateGlue(features.slice(at, at + batchSize), padId, spanLimits(model), regression)
    const y = tf.tidy(() => {
      const logits = model.forward(b, EVAL) // [B, C]
      return regression ? logits.reshape([b.B]) : logits.argMax(1) // [B]
    })
    pushAll(out, await y.data())
    y.dispose()
  }
  return out
}

/** A value as the task's label string (what the scorer and the submission file use). */
export function valueLabel(task: GlueTask, v: number): string {
  return task.labels === null ? String(v) : task.labels[v]
}

/** The task's scores of predicted values against the features' gold labels. */
export function scoreValues(task: GlueTask, features: GlueFeature[], values: number[]): GlueScores {
  const gold = features.map((f) => valueLabel(task, f.label as number))
  return glueScores(task.metric, gold, values.map((v) => valueLabel(task, v)))
}
