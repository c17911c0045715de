import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {AdamW, clipByGlobalNorm} from '../../../src/core/train/optim.js'
import {LinearSchedule} from '../../../src/core/train/schedule.js'
import {trainStep} from '../../../src/core/train/step.js'
import {example, smallConfig} from '../model/helpers.js'

beforeAll(async () => {
  await initBackend('cpu')
})

describe('LinearSchedule', () => {
  it('warms up linearly from the first update, then decays linearly to zero', () => {
    const s = new LinearSchedule(1e-4, 10, 110)
    expect(s.at(1)).toBeCloseTo(1e-5, 12)
    expect(s.at(10)).toBeCloseTo(1e-4, 12)
    expect(s.at(60)).toBeCloseTo(5e-5, 12)
    expect(s.at(110)).toBe(0)
    expect(s.at(200)).toBe(0)
    expect(new LinearSchedule(1, 0, 4).at(1)).toBeCloseTo(0.75, 12)
    expect(() => new LinearSchedule(1, -1, 4)).toThrow(RangeError)
  })
})

describe('clipByGlobalNorm', () => {
  it('gives the factor to norm 1 above it, 1 below, and leaves the gradients alone', () => {
    const big = new Map<string, tf.Tensor>([['a', tf.tensor([3, 0])], ['b', tf.tensor([4])]])
    const r = clipByGlobalNorm(big, 1)
    expect(r.norm).toBeCloseTo(5, 5)
    expect(r.scale).toBeCloseTo(1 / (5 + 1e-6), 7)
    expect(Array.from(big.get('a')!.dataSync())).toEqual([3, 0])
    const small = new Map<string, tf.Tensor>([['a', tf.tensor([0.3, 0.4])]])
    expect(clipByGlobalNorm(small, 1)).toEqual({norm: expect.closeTo(0.5, 5), scale: 1})
    tf.dispose([...big.values(), ...small.values()])
  })

  it('AdamW.apply with the factor equals AdamW on the scaled gradients', () => {
    const run = (g: number[], scale: number) => {
      const opt = new AdamW()
      const p = tf.variable(tf.tensor([1, -2, 3]))
      const grads = new Map<string, tf.Tensor>([['x.weight', tf.tensor(g)]])
      opt.apply([['x.weight', p]], grads, 0.1, scale)
      const out = Array.from(p.dataSync())
      tf.dispose([p, ...grads.values()])
      opt.dispose()
      return out
    }
    const a = run([3, 0, 4], 0.2)
    const b = run([0.6, 0, 0.8], 1)
    a.forEach((x, i) => expect(x).toBeCloseTo(b[i], 6))
  })
})

describe('AdamW', () => {
  it('decays weights but not biases nor LayerNorm (decoupled; zero gradient isolates the decay)', () => {
    const opt = new AdamW({beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1})
    const names = ['x.weight', 'x.bias', 'x.LayerNorm.weight']
    const params = names.map((n) => [n, tf.variable(tf.tensor([2]))] as [string, tf.Variable])
    const grads = new Map(names.map((n) => [n, tf.tensor([0])] as [string, tf.Tensor]))
    opt.apply(params, grads, 0.5)
    expect(params.map(([, v]) => v.dataSync()[0])).toEqual([Math.fround(2 * (1 - 0.5 * 0.1)), 2, 2])
    opt.dispose()
    tf.dispose([...params.map(([, v]) => v), ...grads.values()])
  })
})

describe('training loop', () => {
  it('does not leak tensors (same count after step 10 and step 100, none left after) and lowers the loss', () => {
    const start = tf.memory().numTensors
    const cfg = smallConfig({hidden_size: 8, intermediate_size: 16, num_hidden_layers: 1, max_position_embeddings: 16})
    const model = SpanBertForPreTraining.init(cfg, 1)
    const opt = new AdamW()
    const sched = new LinearSchedule(3e-3, 5, 100)
    const rng = new Rng(2)
    const b = toTensors(collate([example(12, 2, 4, new Rng(3)), example(9, 3, 5, new Rng(4))], {padId: 0, maxTargets: 4, maxPositions: 16}))
    const losses: number[] = []
    let at10 = -1
    for (let t = 1; t <= 100; t++) {
      losses.push(trainStep(model, opt, b, sched.at(t), {training: true, rng}).loss)
      if (t === 10) at10 = tf.memory().numTensors
    }
    expect(tf.memory().numTensors).toBe(at10)
    expect(losses[99]).toBeLessThan(losses[0] * 0.5)
    disposeBatch(b)
    opt.dispose()
    model.dispose()
    expect(tf.memory().numTensors).toBe(start)
  })
})
