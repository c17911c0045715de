/**
 * The summed cross-entropy and argmax hits of a tied decoder's logits x·Wᵀ + b [N, V] without
 * holding them: the rows go through in chunks, each chunk's logits made, scored and freed, and the
 * backward pass makes them again, chunk by chunk (softmax − one-hot by the fused cross-entropy
 * kernels, then dx = d·W, dW = dᵀ·x, db = Σ d). The same sums as crossEntropySum over the whole logits, in another order; what a
 * pre-training step holds for its MLM and SBO decoders drops from 2·N·V floats (the logits and
 * their gradient) to about 2·CHUNK_FLOATS (issue 24: tiny at 32 × 512 spent half its 2.3 GB there).
 * Used where N·V exceeds CHUNK_ABOVE; smaller batches keep the plain path.
 */
import * as tf from '@tensorflow/tfjs'
import {crossEntropySumFused} from '../engine/fused.js'
import {FUSED_KERNELS, runFused} from '../engine/fused-kernels.js'
import {dense} from './layers.js'

/** Logit floats a chunk holds (16 MiB of float32): the larger, the fewer matrix products. */
export const CHUNK_FLOATS = 4 * 2 ** 20

/** Rows a chunk takes for a vocabulary of V. */
export const chunkRows = (V: number): number => Math.max(1, Math.floor(CHUNK_FLOATS / V))

/**
 * Logit floats past which a decoder goes in chunks (128 MiB of float32). The chunked path makes
 * the logits twice (forward, and again backward), one more [N, H]·[H, V] product per decoder:
 * at a BERT vocabulary that is a quarter more CPU per step for tiny and mini at 16 × 128
 * (measured 370 → 470 ms on native), so it is kept for the logits whose memory matters (tiny at
 * 32 × 512: 75 M floats, issue 24) and smaller ones take the plain path, as before it existed.
 */
export const CHUNK_ABOVE = 8 * CHUNK_FLOATS

/** Whether a decoder of N rows over V takes the chunked path (past `above` logit floats). */
export const chunked = (N: number, V: number, above = CHUNK_ABOVE): boolean => N * V > above

/** [Σ cross-entropy, hits] of x [N, H] through w [V, H], b [V] against labels [N] (int32), chunked both ways (`rows` a chunk). */
export function decoderLoss(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, labels: tf.Tensor1D, rows = chunkRows(w.shape[0])): tf.Tensor1D {
  const [N] = x.shape
  const chunks = Array.from({length: Math.ceil(N / rows)}, (_, k) => [k * rows, Math.min(rows, N - k * rows)] as const)
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const [xs, ws, bs, save] = args as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D, tf.GradSaveFunc]
    save([xs, ws, bs])
    const parts = chunks.map(([at, n]) =>
      tf.tidy(() => {
        const logits = dense(xs.slice([at, 0], [n, -1]), ws, bs) // [n, V]
        const y = labels.slice([at], [n]) // [n]
        return tf.stack([crossEntropySumFused(logits, y), tf.argMax(logits, -1).toInt().equal(y).sum().toFloat()]) // [2]
      }),
    )
    const value = tf.tidy(() => tf.addN(parts)) as tf.Tensor1D // [2]: [Σ cross-entropy, hits]
    tf.dispose(parts)
    return {value, gradFunc: (dy: tf.Tensor1D, saved: tf.Tensor[]) => decoderGrads(dy, saved as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D], labels, chunks)}
  })
  return op(x, w, b)
}

/**
 * dlogits [n, V] = scale·(softmax(logits) − onehot(labels)) by the fused cross-entropy kernels
 * (the row log-sum-exp made again, then the gradient in one pass: two kernels on any backend, where
 * tf.softmax, oneHot, sub and mul made four [n, V] temporaries).
 */
function crossEntropyGrad(logits: tf.Tensor2D, labels: tf.Tensor1D, scale: tf.Tensor): tf.Tensor2D {
  const [loss, lse] = runFused(FUSED_KERNELS.crossEntropy, {logits, labels}) as tf.Tensor[] // [], [n]
  loss.dispose()
  return runFused(FUSED_KERNELS.crossEntropyGrad, {dy: scale, logits, labels, lse}) as tf.Tensor2D // [n, V]
}

/** dx [N, H], dW [V, H], db [V] of the summed cross-entropy (the hits have none), chunk by chunk. */
function decoderGrads(
  dy: tf.Tensor,
  [x, w, b]: [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D],
  labels: tf.Tensor1D,
  chunks: (readonly [number, number])[],
): tf.Tensor[] {
  const scale = dy.slice([0], [1]).reshape([]) // d loss / d Σce
  let dw = tf.zerosLike(w) as tf.Tensor2D
  let db = tf.zerosLike(b) as tf.Tensor1D
  const dxs: tf.Tensor2D[] = []
  for (const [at, n] of chunks) {
    const [dx, dwc, dbc] = tf.tidy(() => {
      const xc = x.slice([at, 0], [n, -1]) // [n, H]
      const d = crossEntropyGrad(dense(xc, w, b), labels.slice([at], [n]), scale) // [n, V]
      return [tf.matMul(d, w), tf.matMul(d, xc, true, false), d.sum(0)] // [n, H], [V, H], [V]
    })
    const [dw1, db1] = [dw.add(dwc) as tf.Tensor2D, db.add(dbc) as tf.Tensor1D]
    tf.dispose([dw, db, dwc, dbc])
    ;[dw, db] = [dw1, db1]
    dxs.push(dx as tf.Tensor2D)
  }
  const dx = tf.concat(dxs, 0)
  tf.dispose([...dxs, scale])
  return [dx, dw, db]
}
