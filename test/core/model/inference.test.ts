import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {startNative} from '../../../src/core/engine/native.js'
import {hiddenStates} from '../../../src/core/model/encode.js'
import {tapeRecording} from '../../../src/core/model/inference.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {smallConfig} from './helpers.js'

// Inference frees activations layer by layer when no gradient tape records (src/core/model/inference.ts):
// the peak of live tensor bytes above the weights does not grow with the depth, results are the
// same as under a tape, and nothing is left behind. Runs on native where the addon is built, else tfjs' cpu.
const B = 4
const T = 24

function model(layers: number): SpanBertForPreTraining {
  return SpanBertForPreTraining.init(
    smallConfig({hidden_size: 64, num_attention_heads: 4, intermediate_size: 256, num_hidden_layers: layers, max_position_embeddings: 32}),
    3,
  )
}

function inputs(): [tf.Tensor2D, tf.Tensor2D, tf.Tensor2D] {
  const ids = tf.tensor2d(
    Int32Array.from({length: B * T}, (_, i) => 5 + ((i * 7) % 30)),
    [B, T],
    'int32',
  )
  const mask = tf.tensor2d(
    Float32Array.from({length: B * T}, (_, i) => (i % T < T - (i / T) * 3 ? 1 : 0)),
    [B, T],
  ) // entry b: last 3b tokens padding
  return [ids, tf.zerosLike(ids) as tf.Tensor2D, mask]
}

/** Peak live tensor bytes during f above those live before it (tf.profile). */
async function peakAbove(f: () => tf.Tensor): Promise<number> {
  const info = await tf.profile(() => {
    f().dispose()
  })
  return info.peakBytes - tf.memory().numBytes
}

describe('inference without a gradient tape', () => {
  beforeAll(async () => {
    await startNative()
  })

  it('holds one layer of activations: the peak above the weights does not grow with depth', async () => {
    const [ids, seg, mask] = inputs()
    const peaks: number[] = []
    for (const layers of [2, 8]) {
      const m = model(layers)
      peaks.push(await peakAbove(() => tf.tidy(() => m.encoder.forward(ids, seg, mask, EVAL))))
      peaks.push(await peakAbove(() => hiddenStates(m.params, m.config, ids, seg, mask, [layers])))
      m.params.dispose()
    }
    const layerActs = B * T * (64 * 8 + 256 * 2) * 4 // q, k, v, ctx, attention out, residual sums… and the [B, T, I] pair: one layer's order of magnitude
    expect(peaks[2]).toBeLessThanOrEqual(peaks[0] * 1.05) // 8 layers: the same peak as 2 (every layer kept: about 4×)
    expect(peaks[3]).toBeLessThanOrEqual(peaks[1] * 1.05)
    expect(peaks[0]).toBeLessThan(3 * layerActs)
    tf.dispose([ids, seg, mask])
  })

  it('gives the states a tape-recorded forward gives, keeps the states asked for, and leaves nothing behind', () => {
    const [ids, seg, mask] = inputs()
    const m = model(3)
    const before = tf.memory().numTensors
    const free = tf.tidy(() => m.encoder.forward(ids, seg, mask, EVAL))
    const picked = hiddenStates(m.params, m.config, ids, seg, mask, [0, 3, 1])
    expect(tf.memory().numTensors).toBe(before + 2)
    let taped: tf.Tensor | null = null
    tf.grad((x: tf.Tensor) => {
      expect(tapeRecording()).toBe(true)
      const h = m.encoder.forward(ids, seg, mask, EVAL)
      taped = tf.keep(h.clone())
      return h.sum().mul(x)
    })(tf.scalar(1)).dispose()
    expect(tapeRecording()).toBe(false)
    expect(Array.from(free.dataSync())).toEqual(Array.from(taped!.dataSync()))
    expect(picked.shape).toEqual([B, T, 64 * 3])
    const last = tf.tidy(() => picked.slice([0, 0, 64], [B, T, 64]))
    expect(Array.from(last.dataSync())).toEqual(Array.from(free.dataSync()))
    tf.dispose([free, picked, taped!, last, ids, seg, mask])
    m.params.dispose()
  })
})
