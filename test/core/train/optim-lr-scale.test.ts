// AdamW's per-parameter learning rate (lrScale): coref's head trains at --task-lr, the encoder at --lr.
import * as tf from '@tensorflow/tfjs'
import {beforeAll, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {ADAMW_DEFAULTS, AdamW} from '../../../src/core/train/optim.js'

beforeAll(async () => {
  await initBackend('cpu')
})

it('scales each parameter’s step by lrScale(name); without it every parameter takes lr', () => {
  const step = (lrScale?: (n: string) => number) => {
    const a = tf.variable(tf.tensor1d([1, 1]), true)
    const b = tf.variable(tf.tensor1d([1, 1]), true)
    const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: 0, lrScale})
    const g = new Map([
      ['enc.bias', tf.tensor1d([0.5, -0.5])],
      ['coref.bias', tf.tensor1d([0.5, -0.5])],
    ])
    opt.apply(
      [
        ['enc.bias', a],
        ['coref.bias', b],
      ],
      g,
      0.01,
    )
    const out = [Array.from(a.dataSync()), Array.from(b.dataSync())]
    tf.dispose([a, b, ...g.values()])
    opt.dispose()
    return out
  }
  // Adam's first step moves each weight by lr (the bias-corrected m/√v is ±1)
  const [enc, head] = step((n) => (n.startsWith('coref.') ? 5 : 1))
  expect(enc.map((x) => x - 1)).toEqual([expect.closeTo(-0.01, 6), expect.closeTo(0.01, 6)])
  expect(head.map((x) => x - 1)).toEqual([expect.closeTo(-0.05, 6), expect.closeTo(0.05, 6)])
  expect(step()[1].map((x) => x - 1)).toEqual([expect.closeTo(-0.01, 6), expect.closeTo(0.01, 6)])
})
