import * as tf from '@tensorflow/tfjs'

/**
 * Which tfjs kernels a computation calls: every kernel tfjs' engine runs, forward, backward
 * (gradients are kernels too) and optimiser alike, by name. Kernels that a kernel calls as
 * plain functions inside a backend do not pass through the engine and are not counted: they
 * are that backend's business. Used for the census of what the cuda backend must provide
 * (registry.ts, tools/kernel-census.ts).
 */
export function recordKernels(f: () => void): Set<string> {
  const engine = tf.engine() as unknown as {runKernel: (name: string, ...rest: unknown[]) => unknown}
  const original = engine.runKernel
  const seen = new Set<string>()
  engine.runKernel = function (this: unknown, name: string, ...rest: unknown[]) {
    seen.add(name)
    // spread-ok: a kernel call's own arguments
    return original.call(this, name, ...rest)
  }
  try {
    f()
  } finally {
    engine.runKernel = original
  }
  return seen
}
