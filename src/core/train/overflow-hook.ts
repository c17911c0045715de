import * as tf from '@tensorflow/tfjs'

/**
 * A test hook for dynamic loss scaling (issue 35): SPAN_TEST_OVERFLOW_STEPS=3,7 writes +inf into the
 * first element of the first gradient of the scaler's 3rd and 7th steps (counted from the run's
 * start, skipped ones included: LossScaler.hostIter + 1), as an fp16 overflow would, after the
 * micro-batches' mean and before clipping. Read once per process; unset, it does nothing.
 */
const steps = new Set(
  (process.env.SPAN_TEST_OVERFLOW_STEPS ?? '')
    .split(',')
    .filter((s) => s.trim() !== '')
    .map(Number),
)

export function injectOverflow(grads: Map<string, tf.Tensor>, step: number): void {
  if (!steps.has(step)) return
  const first = grads.entries().next()
  if (first.done) return
  const [name, g] = first.value
  const inf = new Float32Array(g.size)
  inf[0] = Infinity
  grads.set(
    name,
    tf.tidy(() => g.add(tf.tensor(inf, g.shape))),
  )
  g.dispose()
}
