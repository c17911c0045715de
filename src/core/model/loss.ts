import type * as tf from '@tensorflow/tfjs'
import {crossEntropySumFused} from '../engine/fused.js'

/**
 * Summed cross-entropy −Σ log softmax(logits)[label]: logits [N, C], labels [N] int32 → scalar,
 * one fused kernel each way on every backend (src/core/engine/fused.ts).
 */
export function crossEntropySum(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  return crossEntropySumFused(logits, labels)
}
