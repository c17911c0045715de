import * as tf from '@tensorflow/tfjs'
import type {CudaBackend} from './backend.js'

/**
 * Copies `src` over `dst`'s device block (one device-to-device copy on the stream), so that `dst`
 * keeps its address: a buffer that lives across graphed steps (the deferred metrics) is updated in
 * place and every step sees the same addresses (docs/cuda-backend.md, "One step as a CUDA Graph").
 * False off cuda (the caller replaces the tensor instead). `dst` must not share its data with a
 * tensor anyone else holds.
 */
export function overwrite(dst: tf.Tensor, src: tf.Tensor): boolean {
  if (tf.getBackend() !== 'cuda') return false
  if (dst.size !== src.size || dst.dtype !== src.dtype) throw new Error(`overwrite: ${src.dtype} [${src.shape}] over ${dst.dtype} [${dst.shape}]`)
  const b = tf.backend() as unknown as CudaBackend
  b.dev.rt.copy(b.ptr(dst), b.ptr(src), 4 * dst.size) // every dtype the backend stores is 4 bytes an element
  return true
}
