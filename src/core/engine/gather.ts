import * as tf from '@tensorflow/tfjs'

/**
 * Rows of a 2-D table: table[indices] with a gradient that every backend can compute.
 * tf.gather's own gradient needs UnsortedSegmentSum, which the wasm backend lacks, so the
 * gradient here is a scatter-add of the upstream rows back into a zero table (scatterND
 * sums duplicate indices, as an embedding's gradient must).
 * Used for embedding lookups and for picking hidden states (MLM targets, SBO boundaries).
 */
export function gatherRows(table: tf.Tensor2D, indices: tf.Tensor1D): tf.Tensor2D {
  const f = tf.customGrad((t, i, save) => {
    const tab = t as tf.Tensor2D // [R, D]
    const idx = i as tf.Tensor1D // [N] int32
    ;(save as tf.GradSaveFunc)([idx])
    const rows = tf.gather(tab, idx) as tf.Tensor2D // [N, D]
    const shape = tab.shape
    return {
      value: rows,
      gradFunc: (dy, saved) => {
        const [ix] = saved as [tf.Tensor1D]
        const dTable = tf.scatterND(ix.expandDims(1), dy as tf.Tensor2D, shape) // [R, D]
        return [dTable, tf.zerosLike(ix)]
      },
    }
  })
  return f(table, indices) as tf.Tensor2D
}

/** Embedding lookup of ids of any shape: [...S] ids → [...S, D]. */
export function embeddingLookup(table: tf.Tensor2D, ids: tf.Tensor): tf.Tensor {
  return tf.tidy(() => {
    const flat = ids.reshape([-1]) as tf.Tensor1D // [N]
    const rows = gatherRows(table, flat) // [N, D]
    return rows.reshape([...ids.shape, table.shape[1]]) // [...S, D]
  })
}
