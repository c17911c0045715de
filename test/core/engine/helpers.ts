import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../../src/core/data/rng.js'
import {expect} from 'vitest'
import {kernelsEnabled} from '../../../src/core/engine/native-kernels.js'
import {nativeKernelCounts, setNativeKernelsEnabled} from '../../../src/core/engine/native.js'

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

/** The storage of a cpu-backend tensor. */
export function storage(t: tf.Tensor): ArrayBufferView {
  const backend = tf.backend() as unknown as {data: {get(id: tf.DataId): {values: ArrayBufferView}}}
  return backend.data.get(t.dataId).values
}

/** f run by tfjs' own kernels, the previous setting restored after. */
export function withTfjs<T>(f: () => T): T {
  const was = kernelsEnabled()
  setNativeKernelsEnabled(false)
  try {
    return f()
  } finally {
    setNativeKernelsEnabled(was)
  }
}

export const nativeRuns = (name: string): number => nativeKernelCounts()[name]?.native ?? 0

/** The exact-agreement checks of a kernel test file, over its seeded draws. */
export function kernelChecks(draws: Draws) {
  const both = (f: () => tf.Tensor | tf.Tensor[]) => nativeAndReference(draws, f)

  /**
   * Same shapes, dtypes and values, exactly (NaN equal to NaN). `kernel` must have run
   * natively at least once (or, with native false, not at all).
   */
  function expectSame(kernel: string, f: () => tf.Tensor | tf.Tensor[], native = true): tf.Tensor[] {
    const before = nativeRuns(kernel)
    const {nat, ref} = both(f)
    if (native) expect(nativeRuns(kernel), `${kernel} ran natively`).toBeGreaterThan(before)
    else expect(nativeRuns(kernel), `${kernel} left to tfjs`).toBe(before)
    expect(nat.length).toBe(ref.length)
    nat.forEach((n, i) => {
      expect(n.shape).toEqual(ref[i].shape)
      expect(n.dtype).toBe(ref[i].dtype)
      expect(Array.from(n.dataSync())).toEqual(Array.from(ref[i].dataSync()))
    })
    tf.dispose(ref)
    return nat
  }

  /** Gradients within rtol·max|ref| + atol (the reference runs tfjs' arithmetic kernels too). */
  function expectCloseGrads(f: () => tf.Tensor[], rtol = 1e-5, atol = 1e-6): void {
    const {nat, ref} = both(f)
    nat.forEach((n, i) => {
      expect(n.shape).toEqual(ref[i].shape)
      const a = n.dataSync()
      const b = ref[i].dataSync()
      const scale = Array.from(b).reduce((m, v) => Math.max(m, Math.abs(v)), 0)
      for (let j = 0; j < b.length; j++) if (Math.abs(a[j] - b[j]) > rtol * scale + atol) expect(`${i}/${j}: ${a[j]}`).toBe(`${i}/${j}: ${b[j]}`)
    })
    tf.dispose([...nat, ...ref])
  }

  return {both, expectSame, expectCloseGrads}
}
