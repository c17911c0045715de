import * as tf from '@tensorflow/tfjs'
import {nativeAddon} from './native.js'
import {kernelsEnabled} from './native-kernels.js'

/**
 * True when the native backend is the one running: the addon is loaded, its kernels are on
 * (not --backend cpu, which turns them off) and tfjs' current backend is `cpu`. For the
 * engine's own choices (matmul.ts) and tests; the model asks nothing of the backend: its
 * fused ops are kernels of every backend (fused.ts).
 */
export function nativeActive(): boolean {
  return nativeAddon() !== null && kernelsEnabled() && tf.getBackend() === 'cpu'
}
