import * as tf from '@tensorflow/tfjs'
import {nativeActive} from './native-ops.js'

/** The last two axes swapped: [..., M, N] → [..., N, M]. */
export function swapLast(t: tf.Tensor): tf.Tensor {
  const perm = t.shape.map((_, i) => i)
  const r = perm.length
  ;[perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]]
  return t.transpose(perm)
}

/**
 * a·b ([..., M, K] · [..., K, N] → [..., M, N]) whose forward and backward products never
 * ask the kernel to transpose an operand: the wasm backend's BatchMatMul is 7–10× slower
 * with transposeA/transposeB than with both operands in natural layout, while an explicit
 * transpose is cheap. tf.matMul's own gradient (dA = dy·bᵀ, dB = aᵀ·dy) uses the slow
 * forms, so the gradient here transposes first. On the native backend none of this is needed.
 */
export function matMulNN(a: tf.Tensor, b: tf.Tensor): tf.Tensor {
  if (nativeActive()) return tf.matMul(a, b) // BLAS transposes for free: tf.matMul's own gradient is best there
  const f = tf.customGrad((x, y, save) => {
    const A = x as tf.Tensor // [..., M, K]
    const B = y as tf.Tensor // [..., K, N]
    ;(save as tf.GradSaveFunc)([A, B])
    return {
      value: tf.matMul(A, B), // [..., M, N]
      gradFunc: (dy, saved) => {
        const [sa, sb] = saved as [tf.Tensor, tf.Tensor]
        const dA = tf.matMul(dy as tf.Tensor, swapLast(sb)) // [..., M, K]
        const dB = tf.matMul(swapLast(sa), dy as tf.Tensor) // [..., K, N]
        return [dA, dB]
      },
    }
  })
  return f(a, b)
}
