import * as tf from '@tensorflow/tfjs'

/**
 * Σ_l w[k, l] · x[idx[k, l]] for x [N, H], w [K, L], idx [K, L] int32 → [K, H]: the head-attention
 * sum of Joshi et al.'s get_span_emb (there a dense [K, N] matmul) over each span's L positions
 * only. The gradient is recomputed position by position, so nothing of size K·L·H is ever held:
 * dw[k, l] = dy[k]·x[idx[k, l]], dx = Σ_l scatter-add of w[:, l]·dy.
 */
export function weightedRows(x: tf.Tensor2D, w: tf.Tensor2D, idx: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((xs, ws, is, save) => {
    const [xx, ww, ii] = [xs as tf.Tensor2D, ws as tf.Tensor2D, is as tf.Tensor2D]
    ;(save as tf.GradSaveFunc)([xx, ww, ii])
    const value = tf.tidy(() => {
      let acc = tf.zeros([ww.shape[0], xx.shape[1]]) as tf.Tensor2D // [K, H]
      for (let l = 0; l < ww.shape[1]; l++) acc = acc.add(tf.gather(xx, column(ii, l)).mul(ww.slice([0, l], [-1, 1])))
      return acc
    })
    return {value, gradFunc: (dy, saved) => weightedRowsGrad(dy as tf.Tensor2D, saved as tf.Tensor2D[])}
  })
  return f(x, w, idx) as tf.Tensor2D
}

function column(t: tf.Tensor2D, l: number): tf.Tensor1D {
  return t.slice([0, l], [-1, 1]).reshape([-1]) as tf.Tensor1D // [K]
}

function weightedRowsGrad(dy: tf.Tensor2D, [x, w, idx]: tf.Tensor2D[]): tf.Tensor[] {
  return tf.tidy(() => {
    const dws: tf.Tensor[] = []
    let dx = tf.zerosLike(x) as tf.Tensor2D // [N, H]
    for (let l = 0; l < w.shape[1]; l++) {
      const at = column(idx, l) // [K]
      dws.push(tf.gather(x, at).mul(dy).sum(1, true)) // [K, 1]
      dx = dx.add(tf.scatterND(at.expandDims(1), dy.mul(w.slice([0, l], [-1, 1])), x.shape))
    }
    return [dx, tf.concat(dws, 1), tf.zerosLike(idx)] // [N, H], [K, L], [K, L]
  })
}
