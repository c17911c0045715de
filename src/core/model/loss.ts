import * as tf from '@tensorflow/tfjs'
import {crossEntropySumFused} from '../engine/fused.js'
import {gatherRows} from '../engine/gather.js'

/**
 * Summed cross-entropy −Σ log softmax(logits)[label]: logits [N, C], labels [N] int32 → scalar.
 * The label's log-probability is picked with gatherRows (every backend has its gradient).
 */
export function crossEntropySum(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  const fused = crossEntropySumFused(logits, labels) // one pass each way on the native backend
  if (fused) return fused
  return tf.tidy(() => {
    const [N, C] = logits.shape
    const logp = tf.logSoftmax(logits, -1).reshape([N * C, 1]) as tf.Tensor2D // [N·C, 1]
    const flat = tf.range(0, N * C, C, 'int32').add(labels) as tf.Tensor1D // [N]
    return gatherRows(logp, flat).sum().neg() as tf.Scalar // []
  })
}
