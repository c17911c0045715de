import * as tf from '@tensorflow/tfjs'
import {cudaOptions, createCudaBackend} from './backend.js'
import {registerCudaBackend} from './register.js'
import {cudaStatus} from './status.js'

/**
 * Starts the `cuda` backend on the configured device (backend.ts setCudaOptions): the probe
 * (status.ts), the device opened, the kernels registered, then a self-check (an add, a
 * reduction and a matmul against values computed here) before it is made current. null once
 * it runs, else the one-line reason, so `auto` moves on. The normal library search never finds
 * the test stand-ins: only SPAN_CUDA_LIBS leads to them.
 */
export async function startCudaBackend(): Promise<string | null> {
  const s = cudaStatus(cudaOptions().device)
  if (!s.available) return s.detail
  const b = createCudaBackend()
  if (typeof b === 'string') return b
  registerCudaBackend()
  if (!tf.findBackendFactory('cuda')) tf.registerBackend('cuda', () => b)
  if (!(await tf.setBackend('cuda'))) return 'the cuda backend failed to start'
  const why = selfCheck()
  return why === null ? null : `the cuda self-check failed: ${why}`
}

/** null when [1, 2, 3] + [4, 5, 6], its sum and a 2×2 product come back right. */
function selfCheck(): string | null {
  try {
    const got = tf.tidy(() => {
      const a = tf.tensor1d([1, 2, 3])
      const m = tf.matMul(tf.tensor2d([1, 2, 3, 4], [2, 2]), tf.tensor2d([5, 6, 7, 8], [2, 2]))
      return [...a.add(tf.tensor1d([4, 5, 6])).dataSync(), a.sum().dataSync()[0], ...m.dataSync()]
    })
    const want = [5, 7, 9, 6, 19, 22, 43, 50]
    return got.every((v, i) => v === want[i]) ? null : `got ${got.join(',')}, expected ${want.join(',')}`
  } catch (err) {
    return (err as Error).message.split('\n')[0]
  }
}
