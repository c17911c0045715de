import * as tf from '@tensorflow/tfjs'

/** Spans per chunk: a chunk gathers [chunk, L, H] rows at a time (8 MB at L 30, H 128). */
const CHUNK = 512

/**
 * Σ_l w[k, l] · x[idx[k, l]] for x [N, H], w [K, L], idx [K, L] int32 → [K, H]: the head-attention
 * sum of Joshi et al.'s get_span_emb (there a dense [K, N] matmul) over each span's L positions
 * only, as batched [1, L] × [L, H] products over chunks of spans; the gradient is recomputed chunk
 * by chunk, so nothing of size K·L·H is ever held: dw[k] = dy[k] · x[idx[k]]ᵀ, dx = scatter-add of w[k]ᵀ dy[k].
 */
export function weightedRows(x: tf.Tensor2D, w: tf.Tensor2D, idx: tf.Tensor2D): tf.Tensor2D {
  const f = tf.customGrad((xs, ws, is, save) => {
    const [xx, ww, ii] = [xs as tf.Tensor2D, ws as tf.Tensor2D, is as tf.Tensor2D]
    ;(save as tf.GradSaveFunc)([xx, ww, ii])
    const value = tf.tidy(() =>
      tf.concat(
        chunks(ww.shape[0]).map(([a, n]) => tf.matMul(part(ww, a, n).expandDims(1), gathered(xx, ii, a, n)).squeeze([1])),
        0,
      ),
    )
    return {value, gradFunc: (dy, saved) => weightedRowsGrad(dy as tf.Tensor2D, saved as tf.Tensor2D[])}
  })
  return f(x, w, idx) as tf.Tensor2D
}

/** [start, size] of each chunk of K spans. */
function chunks(K: number): [number, number][] {
  return Array.from({length: Math.max(1, Math.ceil(K / CHUNK))}, (_, c): [number, number] => [c * CHUNK, Math.min(CHUNK, K - c * CHUNK)])
}

const part = (t: tf.Tensor2D, a: number, n: number) => t.slice([a, 0], [n, -1]) as tf.Tensor2D // [n, L]

/** x's rows of spans a..a+n: [n, L, H]. */
function gathered(x: tf.Tensor2D, idx: tf.Tensor2D, a: number, n: number): tf.Tensor3D {
  const L = idx.shape[1]
  return tf.gather(x, part(idx, a, n).reshape([-1])).reshape([n, L, x.shape[1]]) as tf.Tensor3D
}

function weightedRowsGrad(dy: tf.Tensor2D, [x, w, idx]: tf.Tensor2D[]): tf.Tensor[] {
  return tf.tidy(() => {
    const dws: tf.Tensor[] = []
    let dx = tf.zerosLike(x) as tf.Tensor2D // [N, H]
    for (const [a, n] of chunks(w.shape[0])) {
      const g = part(dy, a, n).expandDims(1) // [n, 1, H]
      dws.push(tf.matMul(g, gathered(x, idx, a, n), false, true).squeeze([1])) // [n, L]
      const rows = tf.matMul(part(w, a, n).expandDims(2), g).reshape([-1, x.shape[1]]) // [n·L, H]
      dx = dx.add(tf.scatterND(part(idx, a, n).reshape([-1, 1]), rows, x.shape))
    }
    return [dx, tf.concat(dws, 0), tf.zerosLike(idx)] // [N, H], [K, L], [K, L]
  })
}
