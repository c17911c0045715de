import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {beamSearch, detokenize, parseMasks} from '../../../src/core/model/fill.js'
import {fillText} from '../../../src/core/model/fill-stream.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {memorised, tok, vocab} from './fill-helpers.js'

let model: SpanBertForPreTraining
beforeAll(async () => {
  await initBackend('native')
  model = memorised()
}, 300_000)
afterAll(() => model.dispose())

describe('span fill (core)', () => {
  it('a model that memorised a text gives the original span back first, with every head', () => {
    for (const head of ['both', 'mlm', 'sbo'] as const) {
      const spans = fillText(model, tok, 'the old man walked to the [MASK] [MASK] the morning and saw a [MASK] boat', {head, k: 3, beam: 5}, 'x', 1)
      expect(spans.map((s) => s.fills[0].text)).toEqual(['river in', 'small'])
      expect(spans[0]).toMatchObject({start: 26, end: 39})
      expect(spans[0].fills[0].score).toBeGreaterThan(spans[0].fills[1].score)
    }
    const before = tf.memory().numTensors
    fillText(model, tok, 'the [MASK] man', {head: 'both', k: 1, beam: 1}, 'x', 1)
    expect(tf.memory().numTensors).toBe(before)
  })

  it('parses [MASK] runs; refuses text without one, and text longer than the model', () => {
    const q = parseMasks('a [MASK][MASK] b [MASK]', tok, vocab.special, 24)
    expect(q.runs).toEqual([
      {start: 2, end: 14, pos: 2, len: 2},
      {start: 17, end: 23, pos: 5, len: 1},
    ])
    expect(q.ids.at(-1)).toBe(3)
    expect(() => parseMasks('no mask here', tok, vocab.special, 24)).toThrow(/no \[MASK\]/)
    expect(() => parseMasks(`${'the '.repeat(30)}[MASK]`, tok, vocab.special, 24)).toThrow(
      /33 tokens with \[CLS\] and \[SEP\], longer than the model's 24 positions/,
    )
  })

  it('beam search over independent positions finds the exact top k (brute force agrees)', () => {
    const V = 6
    const lp = Float32Array.from({length: 3 * V}, (_, i) => Math.sin(i * 1.7) * 3)
    const all: {ids: number[]; score: number}[] = []
    for (let a = 0; a < V; a++)
      for (let b = 0; b < V; b++)
        for (let c = 0; c < V; c++) {
          if ([a, b, c].includes(0)) continue
          all.push({ids: [a, b, c], score: lp[a] + lp[V + b] + lp[2 * V + c]})
        }
    all.sort((x, y) => y.score - x.score)
    const got = beamSearch(lp, V, 0, 3, 4, 25, new Set([0]))
    expect(got.map((g) => g.ids)).toEqual(all.slice(0, 4).map((g) => g.ids))
    expect(detokenize(['play', '##ing', 'well'])).toBe('playing well')
  })
})
