import * as tf from '@tensorflow/tfjs'

/** A backend that reports its device allocator's peak (the cuda backend, engine/cuda/backend.ts). */
type PeakReporting = {takePeakBytes(): number}

const reporter = (): PeakReporting | null => {
  const b = tf.backend() as unknown as Partial<PeakReporting>
  return typeof b.takePeakBytes === 'function' ? (b as PeakReporting) : null
}

/**
 * The device memory field of a training metrics record (docs/formats.md, "Metrics records"):
 * `peak_device_bytes`, the most bytes the cuda backend's caching allocator had handed out at once
 * during the window's steps (the largest of the steps' peaks), on cuda only. A host-side figure:
 * it needs no synchronisation, since blocks are handed out when work is issued. `during(step)` (or
 * `start()` before a step, `end()` after it); `field()` gives the record's field (empty off cuda)
 * and starts a new window.
 */
export class DevicePeak {
  private peak = 0

  start(): void {
    reporter()?.takePeakBytes()
  }

  end(): void {
    const r = reporter()
    if (r) this.peak = Math.max(this.peak, r.takePeakBytes())
  }

  /** f(), counted as one step of the window */
  during<T>(f: () => T): T {
    this.start()
    const r = f()
    this.end()
    return r
  }

  field(): {peak_device_bytes?: number} {
    const on = reporter() !== null
    const out = on ? {peak_device_bytes: this.peak} : {}
    this.peak = 0
    return out
  }
}
