import * as tf from '@tensorflow/tfjs'
import type {SelftestCase} from '../engine/cuda/selftest-case.js'
import {selftestRand} from '../engine/cuda/selftest-rand.js'
import {AdamW} from '../train/optim.js'

/** Seeded values in [lo, hi), as Float32Array. */
const values = (n: number, seed: number, lo: number, hi: number): Float32Array => Float32Array.from(selftestRand(n, seed, lo, hi))

const NAMES = ['a.weight', 'a.bias', 'b.LayerNorm.weight', 'c.weight', 'empty.weight']
const SIZES = [1001, 37, 64, 70000, 0]

/**
 * Two clipped AdamW steps over parameters of odd sizes (an empty one, two exempt from decay, one
 * with its own learning rate): on cuda AdamW.applyClipped's two launches (adamw_multi.cu: the norm
 * and factor, every update), natively clipByGlobalNorm and per-tensor AdamW. Outputs: each p, m, v
 * and both steps' gradient norms.
 */
function adamwSteps(): tf.Tensor[] {
  const opt = new AdamW({beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01, lrScale: (n) => (n.startsWith('c.') ? 3 : 1)})
  const params: [string, tf.Variable][] = NAMES.map((n, i) => [n, tf.variable(tf.tensor(values(SIZES[i], 40 + i, -1, 1)), false)])
  const norms: tf.Tensor[] = []
  for (const step of [1, 2]) {
    const grads = new Map(NAMES.map((n, i) => [n, tf.tensor(values(SIZES[i], 50 + 10 * step + i, -0.05, 0.05))]))
    const r = opt.applyClipped(params, grads, 1e-3, 1.0)
    norms.push('norm' in r ? tf.scalar(r.norm) : r.sumsq.sqrt())
    if ('sumsq' in r) r.sumsq.dispose()
    tf.dispose([...grads.values()])
  }
  const out = [...params.flatMap(([n, p]) => [p.clone(), opt.m.get(n)!.clone(), opt.v.get(n)!.clone()]), ...norms]
  tf.dispose(params.map(([, p]) => p))
  opt.dispose()
  return out
}

/** The optimiser's cases for `span doctor --selftest`. */
export const optimiserCases = (): SelftestCase[] => [
  {label: 'adamw, all parameters, clipped (2 steps)', row: 'adamw_multi.cu (multi-tensor AdamW, clipped)', f: adamwSteps},
]
