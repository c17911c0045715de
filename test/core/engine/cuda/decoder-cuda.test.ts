import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {decoderLoss} from '../../../../src/core/model/decoder-loss.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// The chunked MLM/SBO decoder loss (src/core/model/decoder-loss.ts: the [N, V] logits never kept,
// made again per chunk in the backward pass, scored by the fused cross-entropy kernels) on the cuda
// stand-in device against the native backend: the sums and every gradient within 1e-5 relative.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

const rand = (shape: number[], seed: number, lo = -1, hi = 1): tf.Tensor => {
  let s = seed
  const n = shape.reduce((a, b) => a * b, 1)
  return tf.tensor(
    Float32Array.from({length: n}, () => ((s = (s * 1664525 + 1013904223) >>> 0), lo + ((s >>> 8) / 2 ** 24) * (hi - lo))),
    shape,
  )
}

describe.skipIf(skip)('the chunked decoder loss on cuda (stand-in) equals native', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('native')
    await initBackend('cuda')
  })
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('sums and gradients over 4 chunks of 5 rows (the last short)', async () => {
    const run = async (backend: string) => {
      await tf.setBackend(backend)
      return tf.tidy(() => {
        const [x, w, b] = [rand([17, 12], 1), rand([53, 12], 2, -0.3, 0.3), rand([53], 3)] as [tf.Tensor2D, tf.Tensor2D, tf.Tensor1D]
        const labels = tf.tensor1d(
          Int32Array.from({length: 17}, (_, i) => (i * 31) % 53),
          'int32',
        )
        const f = (xs: tf.Tensor, ws: tf.Tensor, bs: tf.Tensor) =>
          decoderLoss(xs as tf.Tensor2D, ws as tf.Tensor2D, bs as tf.Tensor1D, labels, 5)
            .mul(tf.tensor1d([0.7, 0]))
            .sum()
        const {value, grads} = tf.valueAndGrads(f)([x, w, b])
        return [decoderLoss(x, w, b, labels, 5), value, ...grads].map((t) => Array.from(t.dataSync()))
      })
    }
    const want = await run('cpu')
    const got = await run('cuda')
    got.forEach((g, j) => {
      const scale = want[j].reduce((m, v) => Math.max(m, Math.abs(v)), 1e-6)
      expect(
        g.reduce((m, v, i) => Math.max(m, Math.abs(v - want[j][i]) / scale), 0),
        `output ${j}`,
      ).toBeLessThanOrEqual(1e-5)
    })
  })
})
