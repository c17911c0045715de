import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../../../src/core/data/rng.js'
import {type Batch, collate, disposeBatch, toTensors} from '../../../../src/core/model/batch.js'
import type {BertConfig} from '../../../../src/core/model/config.js'
import {EVAL} from '../../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {lossAndGrads} from '../../../../src/core/train/step.js'
import {example} from '../../model/helpers.js'

/** How a step test draws its two examples: the generator's seed and each example's [masked, span] lengths. */
export interface StepData {
  seed: number
  shapes: [number, number][]
  vocab: number
}

/** Two length-16 examples (two segments of 8; the first with the next-sentence label) as one batch. */
export function stepBatch(config: BertConfig, data: StepData): Batch {
  const rng = new Rng(data.seed)
  const examples = data.shapes.map(([a, b], i) => ({
    ...example(16, a, b, rng, data.vocab),
    next: i === 0,
  }))
  const withSegments = examples.map((e) => ({...e, segments: e.ids.map((_, j) => (j < 8 ? 0 : 1))}))
  return toTensors(collate(withSegments, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings}))
}

/** Loss and gradients (host copies) of one step from `weightSeed` weights on the current backend. */
export function hostStep(config: BertConfig, weightSeed: number, data: StepData): {loss: number; grads: Map<string, Float32Array>; ms: number} {
  const t0 = performance.now()
  const model = SpanBertForPreTraining.init(config, weightSeed)
  const b = stepBatch(config, data)
  const {parts, grads} = lossAndGrads(model, b, EVAL)
  const host = new Map([...grads].map(([k, g]) => [k, g.dataSync() as Float32Array]))
  tf.dispose([...grads.values()])
  disposeBatch(b)
  model.dispose()
  return {loss: parts[0], grads: host, ms: performance.now() - t0}
}
