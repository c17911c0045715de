import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../../src/core/data/rng.js'
import {setNativeKernelsEnabled} from '../../../src/core/engine/native.js'

/** The seeded generator of a kernel test, held so that a comparison can rewind it. */
export class Draws {
  rng: Rng

  constructor(seed: number) {
    this.rng = new Rng(seed)
  }
}

/**
 * Runs f with the native kernels, then with tfjs' reference kernels (the generator rewound,
 * so inputs drawn inside f are the same); both results as arrays.
 */
export function nativeAndReference(draws: Draws, f: () => tf.Tensor | tf.Tensor[]): {nat: tf.Tensor[]; ref: tf.Tensor[]} {
  const start = draws.rng.state()
  const run = (on: boolean) => {
    draws.rng = Rng.fromState(start)
    setNativeKernelsEnabled(on)
    try {
      const r = tf.tidy(f)
      return Array.isArray(r) ? r : [r]
    } finally {
      setNativeKernelsEnabled(true)
    }
  }
  return {nat: run(true), ref: run(false)}
}
