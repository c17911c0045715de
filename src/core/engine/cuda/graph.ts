import * as tf from '@tensorflow/tfjs'
import {loadCudaAddon} from './addon.js'

/**
 * One training step as a CUDA Graph (native/cuda/src/graph.h; docs/cuda-backend.md, "One step as
 * a CUDA Graph"). tfjs still dispatches every op of the step on the host; the device runtime
 * records the step's stream work instead of issuing it, and at the end launches the graph
 * captured for a byte-identical step (one cuGraphLaunch), or captures one when the same work
 * recurs (the first occurrence runs eagerly: a warm-up), or runs the work eagerly and says why
 * once per shape. Off unless SPAN_CUDA_GRAPH=1 (the step's host syncs and
 * per-step scalars must be gone for whole steps to replay: see the docs).
 */

export interface CudaGraphStats {
  captured: number
  replayed: number
  /** steps run eagerly whose work is remembered: captured when it recurs */
  warmup: number
  eager: number
  /** graphs held (at most 4 per key) */
  graphs: number
  /** stream operations the last step recorded */
  lastOps: number
}

interface GraphRuntime {
  graphBegin(key: string): void
  graphEnd(): string
  graphKey?(key: string): void
  graphStats(): CudaGraphStats
  graphReset(): void
  standinCounters(): StandinCounters | null
}

/** The stand-in libcuda's counters (null on a real driver). */
export interface StandinCounters {
  launches: number
  submits: number
  graphLaunches: number
}

/** Whether graphs were asked for (SPAN_CUDA_GRAPH=1). */
export const cudaGraphRequested = (env: NodeJS.ProcessEnv = process.env): boolean => env.SPAN_CUDA_GRAPH === '1'

/** The addon's graph calls when the cuda backend is current, else why not. */
function runtime(): GraphRuntime | string {
  if (tf.getBackend() !== 'cuda') return `the backend is ${tf.getBackend()}, not cuda`
  const a = loadCudaAddon()
  if (typeof a === 'string') return a
  const rt = a as Partial<GraphRuntime>
  return typeof rt.graphBegin === 'function' ? (rt as GraphRuntime) : 'the cuda addon predates graphs (node native/build.mjs)'
}

const said = new Set<string>()
const keysSeen = new Set<string>()

/**
 * Runs `step` (synchronous: tfjs dispatch, no await) as one graph of shape `key` (e.g. batch ×
 * length): outcome "replayed", "captured", "warm-up" or "eager: why"; an eager outcome is said
 * once per key and reason through `say`. `rekey`, called after the step ran, gives the final key
 * when the step's shapes are known only once it has built its inputs (graphs are kept per key).
 */
export function graphStep<T>(
  key: string,
  step: () => T,
  say: (line: string) => void = (l) => process.stderr.write(`${l}\n`),
  rekey?: () => string,
): {result: T; outcome: string} {
  const rt = runtime()
  let outcome = ''
  let result: T
  if (typeof rt === 'string') {
    result = step()
    outcome = `eager: ${rt}`
  } else {
    rt.graphBegin(key)
    try {
      result = step()
      if (rekey && rt.graphKey) rt.graphKey((key = rekey()))
    } finally {
      outcome = rt.graphEnd() // the recorded work runs (as a graph or eagerly) even when the step threw
    }
  }
  keysSeen.add(key)
  const why = outcome.startsWith('eager: ') ? outcome.slice(7) : ''
  if (why && !said.has(`${key}\0${why}`)) {
    said.add(`${key}\0${why}`)
    say(`span: cuda graph: a step of shape ${key} ran eagerly: ${why}`)
  }
  return {result, outcome}
}

/** The device runtime's graph counters, or null off cuda. */
export function cudaGraphStats(): CudaGraphStats | null {
  const rt = runtime()
  return typeof rt === 'string' ? null : rt.graphStats()
}

/** Destroys every captured graph (tests; a model change). */
export function resetCudaGraphs(): void {
  const rt = runtime()
  if (typeof rt !== 'string') rt.graphReset()
  said.clear()
  keysSeen.clear()
}

/** The stand-in libcuda's counters, or null (a real driver, or off cuda): for tests. */
export function standinCounters(): StandinCounters | null {
  const rt = runtime()
  return typeof rt === 'string' ? null : rt.standinCounters()
}

/**
 * One line on how the run's graphed steps went (null off cuda): steps replayed, captured, run as
 * warm-ups and eagerly, and on the stand-in libcuda its kernel and graph launch counts.
 */
export function graphSummary(): string | null {
  const s = cudaGraphStats()
  if (!s) return null
  const c = standinCounters()
  const launches = c ? `; stand-in libcuda: ${c.launches} kernel launches, ${c.graphLaunches} graph launches` : ''
  return `cuda graph: ${s.replayed} steps replayed, ${s.captured} captured, ${s.warmup} warm-up, ${s.eager} eager, ${keysSeen.size} step shapes${launches}`
}
