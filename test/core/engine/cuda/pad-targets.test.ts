import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../../src/core/data/rng.js'
import {initBackend} from '../../../../src/core/engine/index.js'
import {type HostBatch, collate, disposeBatch, padTargets, toTensors} from '../../../../src/core/model/batch.js'
import {presetConfig} from '../../../../src/core/model/config.js'
import {EVAL} from '../../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../../src/core/model/pretraining.js'
import {lossAndGrads} from '../../../../src/core/train/step.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {example} from '../../model/helpers.js'

// Pre-training on cuda pads a batch's MLM and SBO targets to a fixed count (padTargets: position 0,
// label −1) so that a graphed step replays under dynamic masking (docs/cuda-backend.md, "One step
// as a CUDA Graph"). The padding must change nothing beyond float rounding: hits and counts equal
// to the unpadded batch's, the loss sums within 1e-6 and every gradient within 1e-5 (the padded rows add exact
// zeros, but a GEMM over more rows may tile and sum in another order), and a batch whose SBO
// targets are all padding adds no SBO term.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const VOCAB = 1000
const config = presetConfig('tiny', VOCAB, {hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})

function host(shapes: [number, number][]): HostBatch {
  const rng = new Rng(11)
  const examples = shapes.map(([a, b]) => example(16, a, b, rng, VOCAB))
  return collate(examples, {padId: 0, maxTargets: config.sbo.max_targets, maxPositions: config.max_position_embeddings})
}

function run(h: HostBatch): {stats: Float32Array; loss: number; grads: Map<string, Float32Array>} {
  const model = SpanBertForPreTraining.init(config, 1)
  const b = toTensors(h)
  const {parts, stats, grads} = lossAndGrads(model, b, EVAL)
  const out = new Map([...grads].map(([k, g]) => [k, g.dataSync() as Float32Array]))
  tf.dispose([...grads.values()])
  disposeBatch(b)
  model.dispose()
  return {stats, loss: parts[0], grads: out}
}

describe.skipIf(skip)('targets padded with label −1 on cuda (stand-in)', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('give the unpadded batch’s hits and counts, and its losses and gradients within rounding', async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    for (const shapes of [
      [
        [3, 5],
        [9, 10],
      ],
      [[1, 3]], // a span from position 1 (its left boundary [CLS]): MLM only, the padded SBO rows all padding
    ] as [number, number][][]) {
      const h = host(shapes)
      const padded = padTargets(h, h.mlmPos.length + 7)
      expect(padded.mlmLabels.length).toBe(h.mlmPos.length + 7)
      expect(padded.targets).toEqual({mlm: h.mlmPos.length, sbo: h.sboLabels.length})
      const [want, got] = [run(h), run(padded)]
      const close = (x: number, y: number) => Math.abs(x - y) <= 1e-6 * Math.max(1, Math.abs(y))
      got.stats.forEach((x, i) =>
        expect(i % 3 === 0 ? close(x, want.stats[i]) : x === want.stats[i], `${shapes} stats[${i}] ${x} vs ${want.stats[i]}`).toBe(true),
      )
      expect(close(got.loss, want.loss), `${got.loss} vs ${want.loss}`).toBe(true)
      for (const [name, w] of want.grads) {
        const g = got.grads.get(name) ?? new Float32Array(w.length) // unpadded without SBO rows: no SBO gradient either
        const scale = w.reduce((m, x) => Math.max(m, Math.abs(x)), 1e-3) // floor: the key bias's gradient is rounding noise (softmax ignores it)
        expect(
          g.reduce((m, x, i) => Math.max(m, Math.abs(x - w[i]) / scale), 0),
          name,
        ).toBeLessThan(1e-5)
      }
      for (const [name, g] of got.grads)
        if (!want.grads.has(name))
          expect(
            g.every((x) => x === 0),
            name,
          ).toBe(true)
    }
  })

  it('a batch with more targets than the bound comes back as it is', () => {
    const h = host([[3, 5]])
    expect(padTargets(h, h.mlmPos.length - 1)).toBe(h)
  })
})
