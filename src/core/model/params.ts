import * as tf from '@tensorflow/tfjs'
import {Rng} from '../util/rng.js'
import {SpanError} from '../stream/errors.js'

/** How a parameter starts (BERT's init_bert_weights: N(0, initializer_range), zero biases, LayerNorm 1/0). */
export type Init = 'normal' | 'zeros' | 'ones'

/** One parameter: its Hugging Face name, shape (HF layout) and initialiser. */
export interface ParamSpec {
  name: string
  shape: number[]
  init: Init
}

export function linearSpecs(prefix: string, inSize: number, outSize: number): ParamSpec[] {
  // nn.Linear layout: weight [out, in]
  return [
    {name: `${prefix}.weight`, shape: [outSize, inSize], init: 'normal'},
    {name: `${prefix}.bias`, shape: [outSize], init: 'zeros'},
  ]
}

export function layerNormSpecs(prefix: string, size: number): ParamSpec[] {
  return [
    {name: `${prefix}.weight`, shape: [size], init: 'ones'},
    {name: `${prefix}.bias`, shape: [size], init: 'zeros'},
  ]
}

export function embeddingSpec(name: string, rows: number, size: number): ParamSpec {
  return {name, shape: [rows, size], init: 'normal'}
}

/**
 * Weight decay applies to weights only: not to biases nor LayerNorm parameters
 * (BERT optimization.py `exclude_from_weight_decay=["LayerNorm", "layer_norm", "bias"]`).
 */
export function decays(name: string): boolean {
  return !(name.endsWith('.bias') || name.includes('LayerNorm') || name.includes('layer_norm'))
}

/** The model's parameters: plain tf.Variables in a flat map keyed by Hugging Face names. */
export class ParamStore {
  private readonly vars = new Map<string, tf.Variable>()

  get(name: string): tf.Variable {
    const v = this.vars.get(name)
    if (!v) throw new Error(`no parameter "${name}"`)
    return v
  }

  has(name: string): boolean {
    return this.vars.has(name)
  }

  /** Sets (or replaces) a parameter; the store keeps the tensor. */
  set(name: string, value: tf.Tensor): void {
    this.vars.get(name)?.dispose()
    // unnamed: tfjs variable names are global, and two models may hold the same HF name
    this.vars.set(name, tf.variable(value, true, undefined, 'float32'))
    value.dispose()
  }

  names(): string[] {
    return [...this.vars.keys()]
  }

  entries(): [string, tf.Variable][] {
    return [...this.vars.entries()]
  }

  /** Number of scalar parameters. */
  size(): number {
    let n = 0
    for (const v of this.vars.values()) n += v.size
    return n
  }

  dispose(): void {
    for (const v of this.vars.values()) v.dispose()
    this.vars.clear()
  }
}

/** Initialises every spec'd parameter from a seeded generator (same seed, same weights on every backend). */
export function initParams(store: ParamStore, specs: ParamSpec[], std: number, rng: Rng): void {
  for (const s of specs) store.set(s.name, initTensor(s, std, rng))
}

export function initTensor(s: ParamSpec, std: number, rng: Rng): tf.Tensor {
  const size = s.shape.reduce((a, b) => a * b, 1)
  if (s.init === 'zeros') return tf.zeros(s.shape)
  if (s.init === 'ones') return tf.ones(s.shape)
  return tf.tensor(normals(size, std, rng), s.shape, 'float32')
}

/** N(0, std²) samples by Box–Muller from the seeded generator. */
export function normals(n: number, std: number, rng: Rng): Float32Array {
  const out = new Float32Array(n)
  for (let i = 0; i < n; i += 2) {
    const u1 = (rng.next() + 1) / 4294967297 // (0, 1)
    const u2 = rng.float()
    const r = std * Math.sqrt(-2 * Math.log(u1))
    out[i] = r * Math.cos(2 * Math.PI * u2)
    if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * u2)
  }
  return out
}

/** Checks a tensor's shape against its spec before it replaces a parameter. */
export function checkShape(spec: ParamSpec, shape: readonly number[], source: string): void {
  if (shape.length !== spec.shape.length || shape.some((d, i) => d !== spec.shape[i])) {
    throw new SpanError(`${source}: "${spec.name}" has shape [${shape.join(', ')}], the config expects [${spec.shape.join(', ')}]`)
  }
}
