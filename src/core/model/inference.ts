import * as tf from '@tensorflow/tfjs'

/**
 * Inference without a gradient tape frees activations layer by layer (issue 32): where no
 * tf.grad/tf.variableGrads is recording, a layer's intermediates (q, k, v, the attention context,
 * the [B, T, I] feed-forward states) are disposed as soon as the layer returns, and its input as
 * soon as the next layer has it, so a forward pass holds one layer's activations at a time instead of
 * every layer's until the caller's tf.tidy ends. Under a tape nothing changes (the tape needs them).
 */
export function tapeRecording(): boolean {
  return (tf.engine() as unknown as {state: {gradientDepth: number}}).state.gradientDepth > 0
}

/**
 * y = f(x), with f's intermediates freed when no tape records (see above); `x` too when
 * `freeInput` (the caller's own intermediate, not needed again). Under a tape: f(x) as it is.
 */
export function layerStep<X extends tf.Tensor, Y extends tf.Tensor>(x: X, f: (x: X) => Y, freeInput: boolean): Y {
  if (tapeRecording()) return f(x)
  const y = tf.tidy(() => f(x))
  if (freeInput && (y as tf.Tensor) !== x) x.dispose()
  return y
}
