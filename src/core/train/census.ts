import * as tf from '@tensorflow/tfjs'

/**
 * SPAN_DEBUG_TENSORS=1: after every step each process logs `tensors after step N: M`
 * (tf.memory().numTensors; on cuda also `, device bytes B`, the allocator's live bytes) to stderr, so a leak shows in any run, a data-parallel one too, where
 * each rank's lines carry its `[rank k]` prefix (test/core/dist/mpi.test.ts reads them). The
 * count must stay the same from the second step on (the first creates the optimiser's moments).
 */
export function withTensorCensus<T extends {log: (line: string) => void; onStep?: (step: number) => void}>(io: T, env: NodeJS.ProcessEnv = process.env): T {
  if (env.SPAN_DEBUG_TENSORS !== '1') return io
  const inner = io.onStep
  return {
    ...io,
    onStep(step: number) {
      inner?.(step)
      const m = tf.memory() as tf.MemoryInfo & {numBytesInGPU?: number} // the cuda backend adds its allocator's live bytes
      io.log(`tensors after step ${step}: ${m.numTensors}${m.numBytesInGPU === undefined ? '' : `, device bytes ${m.numBytesInGPU}`}`)
    },
  }
}
