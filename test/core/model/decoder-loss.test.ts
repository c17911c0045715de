import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {loadNative} from '../../../src/core/engine/native.js'
import {decoderLoss} from '../../../src/core/model/decoder-loss.js'
import {dense} from '../../../src/core/model/layers.js'
import {crossEntropySum} from '../../../src/core/model/loss.js'

/** The plain path: the whole logits, then cross-entropy and hits (pretrainingTerms' term). */
function plain(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, y: tf.Tensor1D): tf.Tensor1D {
  const logits = dense(x, w, b)
  return tf.stack([crossEntropySum(logits, y), tf.argMax(logits, -1).toInt().equal(y).sum().toFloat()]) as tf.Tensor1D
}

describe.each(loadNative().available ? ['native', 'cpu'] : ['cpu'])('decoderLoss on %s', (backend) => {
  beforeAll(async () => {
    await initBackend(backend as 'cpu')
  })

  it('gives the sums and gradients of the whole logits, in chunks of 3 rows (the last short), and leaks nothing', () => {
    const [N, H, V] = [10, 6, 17]
    const x = tf.randomNormal([N, H], 0, 1, 'float32', 1) as tf.Tensor2D
    const w = tf.randomNormal([V, H], 0, 1, 'float32', 2) as tf.Tensor2D
    const b = tf.randomNormal([V], 0, 1, 'float32', 3) as tf.Tensor1D
    const y = tf.tensor1d([0, 3, 16, 5, 5, 2, 9, 11, 1, 7], 'int32')
    const before = tf.memory().numTensors
    // 0.7 · Σce, as a loss divided by its count weighs it; the hits (the second sum) carry no gradient
    const want = tf.grads((a, c, d) => crossEntropySum(dense(a as tf.Tensor2D, c as tf.Tensor2D, d as tf.Tensor1D), y).mul(0.7))([x, w, b])
    const got = tf.grads((a, c, d) =>
      decoderLoss(a as tf.Tensor2D, c as tf.Tensor2D, d as tf.Tensor1D, y, 3)
        .slice([0], [1])
        .mul(0.7)
        .sum(),
    )([x, w, b])
    for (let i = 0; i < 3; i++) expect(Array.from(got[i].dataSync())).toEqual(Array.from(want[i].dataSync()).map((v) => expect.closeTo(v, 5)))
    const [p, q] = tf.tidy(() => [plain(x, w, b, y).arraySync(), decoderLoss(x, w, b, y, 3).arraySync()])
    expect(q[0]).toBeCloseTo(p[0], 4)
    expect(q[1]).toBe(p[1])
    tf.dispose([...want, ...got])
    expect(tf.memory().numTensors).toBe(before)
  })
})
