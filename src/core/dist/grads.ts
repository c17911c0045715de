import * as tf from '@tensorflow/tfjs'
import type {Collective} from './collective.js'

/** Gradients are summed in buckets of about this many bytes (PyTorch DDP's bucket_cap_mb, 25). */
export const BUCKET_BYTES = 25 * 1024 * 1024

/** Consecutive runs of names whose float32 sizes add up to at most `bytes` (one name may exceed it alone). */
export function buckets(names: string[], sizeOf: (name: string) => number, bytes = BUCKET_BYTES): string[][] {
  const out: string[][] = []
  let cur: string[] = []
  let used = 0
  for (const n of names) {
    const b = 4 * sizeOf(n)
    if (cur.length > 0 && used + b > bytes) {
      out.push(cur)
      cur = []
      used = 0
    }
    cur.push(n)
    used += b
  }
  if (cur.length > 0) out.push(cur)
  return out
}

/**
 * Sums every rank's gradients in place: `grads` (keyed by parameter name, the caller's) then
 * holds the sum over ranks. `params` fixes the order, the same on every rank. A parameter no
 * rank reached stays without a gradient (AdamW skips it, as one process would); one that only
 * some ranks reached gets zeros from the others. Returns the seconds spent in collectives.
 */
export function allReduceGrads(coll: Collective, params: [string, tf.Variable][], grads: Map<string, tf.Tensor>, bytes = BUCKET_BYTES): number {
  if (coll.size === 1) return 0
  const t0 = performance.now()
  const present = Float64Array.from(params, ([n]) => (grads.has(n) ? 1 : 0)) // [P]
  coll.allReduceSum([present])
  const shapes = new Map(params.map(([n, v]) => [n, v.shape]))
  const names = params.map(([n]) => n).filter((_, i) => present[i] > 0)
  const size = (n: string) => (shapes.get(n) as number[]).reduce((a, b) => a * b, 1)
  for (const group of buckets(names, size, bytes)) {
    const buf = new Float32Array(group.reduce((s, n) => s + size(n), 0))
    let off = 0
    for (const n of group) {
      const g = grads.get(n)
      if (g) buf.set(g.dataSync() as Float32Array, off)
      off += size(n)
    }
    coll.allReduceSum([buf])
    off = 0
    for (const n of group) {
      const old = grads.get(n)
      grads.set(n, tf.tensor(buf.slice(off, off + size(n)), shapes.get(n)))
      old?.dispose()
      off += size(n)
    }
  }
  return (performance.now() - t0) / 1000
}

/** Rank 0's values of every parameter (and any further variables), assigned on every rank. */
export function broadcastVariables(coll: Collective, vars: [string, tf.Variable][], bytes = BUCKET_BYTES): void {
  if (coll.size === 1) return
  const byName = new Map(vars)
  const size = (n: string) => (byName.get(n) as tf.Variable).size
  for (const group of buckets(vars.map(([n]) => n), size, bytes)) {
    const buf = new Float32Array(group.reduce((s, n) => s + size(n), 0))
    let off = 0
    for (const n of group) {
      buf.set((byName.get(n) as tf.Variable).dataSync() as Float32Array, off)
      off += size(n)
    }
    coll.broadcast([buf], 0)
    off = 0
    for (const n of group) {
      const v = byName.get(n) as tf.Variable
      tf.tidy(() => v.assign(tf.tensor(buf.slice(off, off + v.size), v.shape)))
      off += v.size
    }
  }
}
