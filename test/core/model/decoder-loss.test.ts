import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {loadNative} from '../../../src/core/engine/native.js'
import {Rng} from '../../../src/core/data/rng.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {presetConfig} from '../../../src/core/model/config.js'
import {CHUNK_FLOATS, chunked, decoderLoss} from '../../../src/core/model/decoder-loss.js'
import {EVAL, dense} from '../../../src/core/model/layers.js'
import {SpanBertForPreTraining, pretrainingTerms} from '../../../src/core/model/pretraining.js'
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

describe('SpanBertForPreTraining.trainingTerms', () => {
  it('gives the loss, stats and gradients of pretrainingTerms(forward) where its decoders go in chunks', async () => {
    await initBackend(loadNative().available ? 'native' : 'cpu')
    const V = 40000 // 8 rows × 15 targets × V > CHUNK_FLOATS, the threshold given below: both decoders chunked
    const c = presetConfig('tiny', V, {
      num_hidden_layers: 1,
      hidden_size: 8,
      num_attention_heads: 2,
      intermediate_size: 16,
      hidden_dropout_prob: 0,
      attention_probs_dropout_prob: 0,
    })
    const model = SpanBertForPreTraining.init(c, 3)
    const rng = new Rng(5)
    const exs = Array.from({length: 8}, () => {
      const ids = [101, ...Array.from({length: 126}, () => 200 + rng.int(V - 200)), 102]
      const targets: [number, number][] = []
      const spans: [number, number, string][] = []
      for (let s = 3; s + 2 < 120 && targets.length < 19; s += 6) {
        spans.push([s, s + 1, 'mask'])
        for (const p of [s, s + 1]) targets.push([p, ids[p]])
      }
      return {ids: ids.map((id, p) => (targets.some(([q]) => q === p) ? 103 : id)), targets, spans}
    })
    const b = toTensors(collate(exs, {padId: 0, maxTargets: 15, maxPositions: 512}))
    expect(chunked(b.nMlm, V, CHUNK_FLOATS)).toBe(true)
    expect(chunked(b.nMlm, V)).toBe(false) // under CHUNK_ABOVE: a run of this size takes the plain path
    const vars = model.trainableVariables()
    const run = (f: () => {total: tf.Scalar; stats: tf.Tensor1D}) => {
      let stats: number[] = []
      const {value, grads} = tf.variableGrads(() => {
        const t = f()
        stats = Array.from(t.stats.dataSync())
        return t.total
      }, vars)
      const out = {loss: value.dataSync()[0], stats, grads: vars.map((v) => (grads[v.name] ? Array.from(grads[v.name].dataSync()) : null))}
      tf.dispose([value, ...Object.values(grads)])
      return out
    }
    const want = run(() => pretrainingTerms(model.forward(b, EVAL), b))
    const got = run(() => model.trainingTerms(b, EVAL, undefined, CHUNK_FLOATS))
    expect(got.loss).toBeCloseTo(want.loss, 4)
    expect(got.stats.map((x) => x.toFixed(2))).toEqual(want.stats.map((x) => x.toFixed(2)))
    expect(got.grads.map((g) => g === null)).toEqual(want.grads.map((g) => g === null)) // the same parameters reached (not the pooler)
    for (let i = 0; i < vars.length; i++) {
      const [g, w] = [got.grads[i], want.grads[i]]
      if (g && w) expect(g.reduce((m, x, j) => Math.max(m, Math.abs(x - w[j])), 0)).toBeLessThan(1e-5)
    }
    disposeBatch(b)
    model.dispose()
  })
})
