// A whole document predicted a block at a time (src/core/tasks/coref/predict-bounded.ts, issue 36)
// computes what the one-piece forward pass computes: the same top spans, antecedents and scores,
// with blocks far smaller than the document (one segment, 7 candidates, 3 rows), at depth 1 and 2,
// with speaker and genre features; an empty document predicts no clusters; no tensor is left behind.
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {COREF_DEFAULTS, type CorefHeadConfig} from '../../../src/core/tasks/coref/config.js'
import {CorefModel} from '../../../src/core/tasks/coref/model.js'
import {boundedScores, predictBounded} from '../../../src/core/tasks/coref/predict-bounded.js'
import {type CorefText, featurise} from '../../../src/core/tasks/coref/segments.js'
import {topAntecedents} from '../../../src/core/tasks/coref/spans.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab} from '../train/helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: true})
const WORDS = ['john', 'saw', 'mary', 'and', 'he', 'liked', 'her', 'very', 'much', '.']

/** n sentences of 10 words, two speakers taking turns. */
function text(n: number): CorefText {
  const words = Array.from({length: 10 * n}, (_, i) => WORDS[i % 10])
  return {
    key: 'd',
    words,
    sentence: words.map((_, i) => Math.floor(i / 10)),
    speaker: words.map((_, i) => (Math.floor(i / 10) % 2 ? 'a' : 'b')),
    genre: 'nw',
    clusters: [],
  }
}

beforeAll(async () => {
  await initBackend('cpu')
})

describe('bounded prediction', () => {
  for (const depth of [1, 2])
    it(`equals the one-piece forward pass (depth ${depth}, speakers and genre)`, () => {
      const head: CorefHeadConfig = {
        ...COREF_DEFAULTS,
        max_segment_len: 12,
        ffnn_size: 8,
        max_top_antecedents: 5,
        coref_depth: depth,
        speakers: true,
        genres: ['nw'],
      }
      const model = CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 3)
      const d = featurise(text(6), tok, head.max_segment_len, head.genres)
      expect(d.segments.length).toBeGreaterThan(4)
      const before = tf.memory().numTensors
      const b = boundedScores(model, d, {segments: 1, candidates: 7, rows: 3})
      expect(tf.memory().numTensors).toBe(before)
      const whole = tf.tidy(() => {
        const o = model.forward(d, EVAL)
        return {starts: o.starts, ends: o.ends, index: o.ant.index, mask: o.ant.mask, scores: o.scores.dataSync() as Float32Array, mention: o.mention}
      })
      expect(b.starts.length).toBeGreaterThan(10)
      expect([b.starts, b.ends, b.ant.index, b.ant.mask]).toEqual([whole.starts, whole.ends, whole.index, whole.mask])
      expect(b.scores.length).toBe(whole.scores.length)
      b.scores.forEach((s, i) => (Number.isFinite(s) ? expect(s).toBeCloseTo(whole.scores[i], 4) : expect(s).toBe(whole.scores[i])))
      b.mention.forEach((s, i) => expect(s).toBeCloseTo(whole.mention[i], 4))
      expect(predictBounded(model, d, {segments: 2, candidates: 50, rows: 4})).toEqual(model.predict(d))
      model.dispose()
    })

  it("keeps each span's top c antecedents as sorting all earlier spans would (score, then the nearer)", () => {
    const k = 40
    const c = 6
    const fast = Array.from({length: k * k}, (_, t) => ((t * 7919) % 13) - 6) // many ties
    const ant = topAntecedents(fast, k, c)
    for (let i = 0; i < k; i++) {
      const js = Array.from({length: i}, (_, j) => i - 1 - j)
      if (i > c) js.sort((a, b) => fast[i * k + b] - fast[i * k + a] || b - a)
      expect(Array.from(ant.index.subarray(i * c, i * c + Math.min(i, c)))).toEqual(js.slice(0, c))
      expect(Array.from(ant.mask.subarray(i * c, (i + 1) * c))).toEqual(Array.from({length: c}, (_, t) => (t < i ? 1 : 0)))
    }
  })

  it('predicts no clusters for a document without words', () => {
    const head: CorefHeadConfig = {...COREF_DEFAULTS, max_segment_len: 12, ffnn_size: 8}
    const model = CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 3)
    const d = featurise({key: 'e', words: [], sentence: [], clusters: []}, tok, 12, [])
    expect(model.predict(d)).toEqual([])
    model.dispose()
  })
})
