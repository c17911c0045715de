import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {dropoutFused, fusedCounts, layerNormFused, linearFused, residualLayerNormFused} from '../../../src/core/engine/fused.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {loadNative, setNativeKernelsEnabled} from '../../../src/core/engine/native.js'

// SpanResidualLayerNorm (src/core/engine/fused.ts residualLayerNormFused, issue 21 item 3) on the
// CPU backends: the same values and gradients, bit for bit, as the chain of fused ops the model
// called before it (linear → dropout → add → LayerNorm), with the native kernels on and off, with
// dropout and without. The cuda kernel is compared with native in test/core/engine/cuda/fused-cuda.test.ts.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

function rand(rng: Rng, shape: number[], lo = -2, hi = 2): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1)
  return tf.tensor(
    Float32Array.from({length: n}, () => lo + (hi - lo) * rng.float()),
    shape,
    'float32',
  )
}

type Args = [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D, tf.Tensor2D, tf.Tensor1D, tf.Tensor1D]

/** Loss Σ y·c and its gradients w.r.t. all six inputs, through `f`. */
function valueAndGrads(f: (...a: Args) => tf.Tensor, args: Args, c: tf.Tensor): number[][] {
  return tf.tidy(() => {
    const {value, grads} = tf.valueAndGrads((...a: tf.Tensor[]) =>
      f(...(a as Args))
        .mul(c)
        .sum(),
    )(args)
    return [value, ...grads, f(...args)].map((t) => Array.from(t.dataSync()))
  })
}

function compare(rate: number): void {
  const rng = new Rng(rate > 0 ? 5 : 6)
  const [N, I, H, eps, seed] = [13, 9, 7, 1e-12, 4242]
  const args = [rand(rng, [N, I]), rand(rng, [H, I], -0.5, 0.5), rand(rng, [H]), rand(rng, [N, H]), rand(rng, [H], 0.5, 1.5), rand(rng, [H], -0.1, 0.1)] as Args
  const c = rand(rng, [N, H])
  const fused = (...a: Args) => residualLayerNormFused(a[0], a[1], a[2], a[3], a[4], a[5], {eps, rate, seed})
  const chain = (...a: Args) => {
    const z = linearFused(a[0], a[1], a[2], 'linear')
    return layerNormFused((rate > 0 ? dropoutFused(z, rate, seed) : z).add(a[3]), a[4], a[5], eps)
  }
  const got = valueAndGrads(fused, args, c)
  const want = valueAndGrads(chain, args, c)
  const names = ['loss', 'dx', 'dw', 'db', 'dresidual', 'dg', 'dbeta', 'y']
  got.forEach((g, i) => expect(g, names[i]).toEqual(want[i]))
  tf.dispose([...args, c])
}

describe('SpanResidualLayerNorm equals linear → dropout → add → LayerNorm', () => {
  beforeAll(async () => {
    await initBackend('cpu')
  })

  it('on the composite kernels (native off), with and without dropout, values and every gradient bit for bit', () => {
    if (status.available) setNativeKernelsEnabled(false)
    try {
      compare(0)
      compare(0.3)
    } finally {
      if (status.available) setNativeKernelsEnabled(true)
    }
  })

  it.skipIf(!status.available)(`on the native kernels, with and without dropout${reason}`, async () => {
    await initBackend('native')
    const before = fusedCounts().residualLayerNorm
    compare(0)
    compare(0.3)
    expect(fusedCounts().residualLayerNorm, 'the addon ran it (native/src/residual.cc), not the composite chain').toBeGreaterThan(before)
    await initBackend('cpu')
  })

  it('leaks no tensor over a forward and backward pass', () => {
    const rng = new Rng(1)
    const args = [rand(rng, [4, 3]), rand(rng, [5, 3]), rand(rng, [5]), rand(rng, [4, 5]), rand(rng, [5]), rand(rng, [5])] as Args
    const before = tf.memory().numTensors
    const {value, grads} = tf.valueAndGrads((...a: tf.Tensor[]) => residualLayerNormFused(...(a as Args), {eps: 1e-12, rate: 0.2, seed: 3}).sum())(args)
    tf.dispose([value, ...grads])
    expect(tf.memory().numTensors).toBe(before)
    tf.dispose(args)
  })
})
