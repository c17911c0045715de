import * as tf from '@tensorflow/tfjs'
import {graphStep, resetCudaGraphs} from '../engine/cuda/graph.js'
import {collate, disposeBatch, type MaskedExample, toTensors} from '../model/batch.js'
import {type BertConfig} from '../model/config.js'
import {EVAL} from '../model/layers.js'
import {SpanBertForPreTraining} from '../model/pretraining.js'

/**
 * `span doctor --selftest`'s graph row (docs/cuda-backend.md, "One step as a CUDA Graph"): on
 * the current (cuda) backend, three forward + backward passes of one batch run eagerly, then three
 * through graphStep, which must be a warm-up, a capture and a replay; the loss and every gradient
 * of each graphed step must equal the eager step's bit for bit. On a GPU this checks the real
 * driver's capture and replay, which the stand-in only models.
 */
type Grads = {value: tf.Scalar; grads: tf.NamedTensorMap}

/** Host copies (hex of the float32 bytes) of the loss and every gradient, disposed. */
function hexes(r: Grads): string[] {
  return [
    r.value,
    ...Object.keys(r.grads)
      .sort()
      .map((k) => r.grads[k]),
  ].map((t) => {
    const hex = Buffer.from((t.dataSync() as Float32Array).buffer).toString('hex')
    t.dispose()
    return hex
  })
}

export function graphSelftestRow(config: BertConfig, examples: MaskedExample[]): {kernel: string; cases: number; maxRelError: number; ok: boolean} {
  const model = SpanBertForPreTraining.init(config, 1)
  const host = collate(examples, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings})
  const vars = model.params.entries().map(([, v]) => v)
  const step = (): Grads => {
    const b = toTensors(host) // uploads inside the step: the graph reads them from its staging buffer
    const r = tf.variableGrads(() => model.trainingTerms(b, EVAL).total, vars)
    disposeBatch(b)
    return r
  }
  try {
    resetCudaGraphs()
    const eager = [0, 1, 2].map(() => hexes(step()))
    const outcomes: string[] = []
    const graphed = eager.map(() => {
      const {result, outcome} = graphStep('selftest', step, () => {})
      outcomes.push(outcome)
      return hexes(result) // read after the step: a read inside it would decline
    })
    const equal = graphed.filter((g, i) => g.join() === eager[i].join()).length
    const flow = outcomes.join(', ')
    const ok = equal === 3 && flow === 'warm-up, captured, replayed'
    return {kernel: `cuda graph (fwd+bwd ×3: ${flow})`, cases: equal, maxRelError: equal === 3 ? 0 : Infinity, ok}
  } finally {
    resetCudaGraphs()
    model.dispose()
  }
}
