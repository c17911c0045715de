import {totalmem} from 'node:os'
import {SpanError} from '../stream/errors.js'
import type {BertConfig} from './config.js'
import {SpanBertForPreTraining} from './pretraining.js'

/** Largest tensor a typed array can hold here (V8: 2^32 − 1 elements of float32 on 64-bit). */
const MAX_TENSOR = 2 ** 32 - 1
/** float32 copies of the parameters a training step holds: weights, gradients, AdamW m and v. */
const COPIES = 4

/**
 * Refuses, before any work, a model that cannot be built on this machine: a tensor beyond the
 * largest typed array, or weights, gradients and optimiser moments beyond the physical memory
 * (`--hidden 1000000000` would otherwise end in a RangeError after the data is read).
 */
export function checkModelFits(c: BertConfig, what = 'the model'): void {
  let total = 0
  for (const spec of SpanBertForPreTraining.specs(c)) {
    const n = spec.shape.reduce((a, b) => a * b, 1)
    if (n > MAX_TENSOR)
      throw new SpanError(
        `${what}: "${spec.name}" would have ${n.toExponential(2)} elements (shape ${spec.shape.join('×')}), more than one tensor can hold; choose a smaller model`,
      )
    total += n
  }
  const need = total * 4 * COPIES
  if (need > totalmem()) {
    const gb = (b: number) => (b / 2 ** 30).toFixed(1)
    throw new SpanError(
      `${what}: ${total.toExponential(2)} parameters need about ${gb(need)} GB for weights, gradients and AdamW moments; this machine has ${gb(totalmem())} GB`,
    )
  }
}
