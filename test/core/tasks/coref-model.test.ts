// The coreference model's parts (src/core/tasks/coref/): segmenting, candidate spans and the
// crossing rule, top-k, antecedent masks, the loss on a hand case, decoding, the head-attention
// sum's gradient, and one document's loss and gradients without a tensor left behind.
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {COREF_DEFAULTS, type CorefHeadConfig} from '../../../src/core/tasks/coref/config.js'
import {predictedAntecedents, predictedClusters, toWords} from '../../../src/core/tasks/coref/decode.js'
import {antecedentLabels, marginalLoss, mentionLoss} from '../../../src/core/tasks/coref/loss.js'
import {CorefModel} from '../../../src/core/tasks/coref/model.js'
import {pickScores} from '../../../src/core/tasks/coref/pairs.js'
import {weightedRows} from '../../../src/core/tasks/coref/rows.js'
import {type CorefText, featurise, splitSegments} from '../../../src/core/tasks/coref/segments.js'
import {bucketDistance, candidateSpans, extractSpans, topAntecedents, windowOf} from '../../../src/core/tasks/coref/spans.js'
import {Rng} from '../../../src/core/util/rng.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab} from '../train/helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: true})

/** Two sentences; "Elizabeth" splits into sub-tokens in the fixture vocabulary or not, either way a word. */
const doc: CorefText = {
  key: 'd',
  words: ['John', 'saw', 'Mary', '.', 'He', 'liked', 'her', 'unbelievably', '.'],
  sentence: [0, 0, 0, 0, 1, 1, 1, 1, 1],
  clusters: [
    [
      [0, 0],
      [4, 4],
    ],
    [
      [2, 2],
      [6, 6],
    ],
  ],
}

beforeAll(async () => {
  await initBackend('cpu')
})

describe('segments (minimize.py split_into_segments)', () => {
  it('cuts at the last sentence end that fits, else at the last word end', () => {
    //         sub-tokens: 0 1 2 | 3 4 5 6 7 (sentence ends at 2 and 7; words end everywhere but 4)
    const sEnd = Uint8Array.from([0, 0, 1, 0, 0, 0, 0, 1])
    const wEnd = Uint8Array.from([1, 1, 1, 1, 0, 1, 1, 1])
    expect(splitSegments(8, 7, sEnd, wEnd)).toEqual([0, 3]) // 5 sub-tokens fit: sentence 1 ends at 2; then 3..7
    expect(splitSegments(8, 5, sEnd, wEnd)).toEqual([0, 3, 6]) // 3 fit: 0..2; 3..5 has no sentence end, word end at 5
    expect(splitSegments(8, 4, sEnd, wEnd)).toEqual([0, 2, 3, 4, 6]) // 2 fit: 0..1 (word end), 2 (sentence end), 3 (4 is inside a word), 4..5, 6..7
  })

  it('featurises words into [CLS] … [SEP] segments with clusters in sub-tokens', () => {
    const d = featurise({...doc, words: doc.words.map((w) => (w === 'unbelievably' ? 'unaffable' : w))}, tok, 8, [])
    const n = d.wordOf.length
    expect(d.segments.every((s) => s.length <= 8 && s[0] === fixtureVocab.special.cls && s[s.length - 1] === fixtureVocab.special.sep)).toBe(true)
    expect(d.segments.reduce((t, s) => t + s.length - 2, 0)).toBe(n)
    expect(d.segStart[1]).toBe(Array.from(d.sentenceOf).indexOf(1)) // the first cut is the sentence end
    const first = (w: number) => Array.from(d.wordOf).indexOf(w)
    const last = (w: number) => Array.from(d.wordOf).lastIndexOf(w)
    expect(d.clusters[1]).toEqual([
      [first(2), last(2)],
      [first(6), last(6)],
    ])
  })
})

describe('candidate spans, top-k and antecedents', () => {
  it('enumerates spans on word boundaries inside one sentence, at most maxWidth sub-tokens', () => {
    const d = featurise(doc, tok, 64, [])
    const c = candidateSpans(d, 3)
    for (let i = 0; i < c.starts.length; i++) {
      const [s, e] = [c.starts[i], c.ends[i]]
      expect(e - s + 1).toBeLessThanOrEqual(3)
      expect(d.sentenceOf[s]).toBe(d.sentenceOf[e])
      expect(d.wordStart[s] && d.wordEnd[e]).toBeTruthy()
    }
    expect(c.starts.length).toBe(new Set(Array.from(c.starts, (s, i) => `${s},${c.ends[i]}`)).size)
    expect(
      Array.from(c.cluster)
        .filter((x) => x > 0)
        .sort(),
    ).toEqual([1, 1, 2, 2])
    expect(Array.from(c.starts)).toEqual([...c.starts].sort((a, b) => a - b))
  })

  it('extractSpans keeps the best spans, drops crossing ones (nesting allowed), sorts by position', () => {
    const starts = [0, 1, 2, 0, 3]
    const ends = [2, 3, 2, 4, 3]
    // scores: [0,2] best, [1,3] crosses it, [2,2] nested, [0,4] contains both, [3,3]
    expect(extractSpans([5, 4, 3, 2, 1], starts, ends, 10)).toEqual([0, 3, 2, 4]) // [0,2] before [0,4]: by start, then end
    expect(extractSpans([5, 4, 3, 2, 1], starts, ends, 2)).toEqual([0, 2]) // top 2 of the non-crossing: [0,2], [2,2]
    expect(extractSpans([1, 5, 3, 2, 4], starts, ends, 10)).toEqual([3, 1, 2, 4]) // [1,3] first; [0,2] crosses it
  })

  it('bucket_distance: 0..4 as they are, then semi-log, 64+ in bucket 9', () => {
    expect([0, 1, 4, 5, 7, 8, 15, 16, 63, 64, 1000].map(bucketDistance)).toEqual([0, 1, 4, 5, 5, 6, 6, 7, 8, 9, 9])
  })

  it('topAntecedents keeps the c best earlier spans and masks the rest', () => {
    const k = 4
    const fast = [0, 0, 0, 0, 9, 0, 0, 0, 1, 3, 0, 0, 5, 7, 2, 0] // row i, column j; only j < i counts
    const a = topAntecedents(fast, k, 2)
    expect(Array.from(a.mask)).toEqual([0, 0, 1, 0, 1, 1, 1, 1])
    expect(Array.from(a.index.slice(2, 4))).toEqual([0, 0]) // span 1: span 0, then padding
    expect(Array.from(a.index.slice(4, 6)).sort()).toEqual([0, 1])
    expect(Array.from(a.index.slice(6, 8))).toEqual([1, 0]) // span 3: scores 5, 7, 2 → spans 1 and 0
  })

  it('pickScores gathers the kept coarse scores and gives padding entries −∞ (not a copy of span 0)', () => {
    const k = 3
    const fast = tf.tensor2d([-Infinity, -Infinity, -Infinity, 4, -Infinity, -Infinity, 1, 2, -Infinity], [k, k])
    const a = topAntecedents(fast.dataSync(), k, 2) // span 1 has one earlier span: its second entry pads
    const got = pickScores(fast, a)
    expect(Array.from(got.dataSync())).toEqual([-Infinity, -Infinity, 4, -Infinity, 2, 1])
    tf.dispose([fast, got])
  })

  it('a training window keeps the mentions inside it, shifted', () => {
    const d = featurise(doc, tok, 6, [])
    const w = windowOf(d, 1, 1)
    const lo = d.segStart[1]
    expect(w.wordOf.length).toBe((d.segStart[2] ?? d.wordOf.length) - lo)
    expect(w.segmentOf.every((s) => s === 0)).toBe(true)
    const inside = d.clusters.flat().filter(([s, e]) => s >= lo && e < lo + w.wordOf.length)
    expect(w.clusters.flat()).toEqual(inside.map(([s, e]) => [s - lo, e - lo]))
  })
})

describe('loss and decoding', () => {
  it('labels: same gold cluster among real antecedents, else the dummy', () => {
    const ant = {c: 2, index: Int32Array.from([0, 0, 0, 0, 1, 0]), mask: Uint8Array.from([0, 0, 1, 0, 1, 1])}
    expect(Array.from(antecedentLabels([1, 1, 0], ant))).toEqual([1, 0, 0, 0, 1, 0, 1, 0, 0])
  })

  it('marginal log-likelihood on a hand case', () => {
    // span 0: scores [0, 1, 2], gold {1, 2}: log(1 + e + e²) − log(e + e²)
    // span 1: scores [0, -1, -inf], gold {0}: log(1 + e⁻¹) − 0
    const s = tf.tensor2d([0, 1, 2, 0, -1, -Infinity], [2, 3])
    const y = Uint8Array.from([0, 1, 1, 1, 0, 0])
    const want = Math.log(1 + Math.E + Math.E ** 2) - Math.log(Math.E + Math.E ** 2) + Math.log(1 + Math.exp(-1))
    const got = marginalLoss(s, y)
    expect(got.dataSync()[0]).toBeCloseTo(want, 5)
    tf.dispose([s, got])
  })

  it("fast-coref's mention loss: summed BCE with logits", () => {
    const s = tf.tensor1d([2, -1, 0])
    const got = mentionLoss(s, [1, 0, 3]) // gold, not, gold
    const want = Math.log(1 + Math.exp(-2)) + Math.log(1 + Math.exp(-1)) + Math.log(2)
    expect(got.dataSync()[0]).toBeCloseTo(want, 5)
    tf.dispose([s, got])
  })

  it('decodes best antecedents left to right into clusters; singletons above 0 on request', () => {
    const ant = {c: 2, index: Int32Array.from([0, 0, 0, 0, 1, 0, 2, 1]), mask: Uint8Array.from([0, 0, 1, 0, 1, 1, 1, 1])}
    // span 1 → 0 (score 2 > dummy 0); span 2: dummy wins; span 3 → 1
    const scores = [0, -9, -9, 0, 2, -9, 0, -1, -2, 0, -1, 3]
    const a = predictedAntecedents(scores, ant, 4)
    expect(Array.from(a)).toEqual([-1, 0, -1, 1])
    const top = {starts: [0, 2, 4, 6], ends: [0, 3, 4, 6], mention: [1, 1, 0.5, 1]}
    expect(predictedClusters(top, a, false)).toEqual([
      [
        [0, 0],
        [2, 3],
        [6, 6],
      ],
    ])
    expect(predictedClusters(top, a, true)[1]).toEqual([[4, 4]])
    expect(predictedClusters({...top, mention: [1, 1, -0.5, 1]}, a, true)).toHaveLength(1)
    expect(toWords([[[2, 3]], [[0, 1]]], [0, 0, 1, 1])).toEqual([[[0, 0]], [[1, 1]]])
  })
})

describe('the model', () => {
  it('weightedRows: value and gradients equal the dense masked sum', () => {
    const rng = new Rng(3)
    const x = tf.tensor2d(
      Array.from({length: 12}, () => rng.float() - 0.5),
      [4, 3],
    )
    const w = tf.tensor2d([0.2, 0.8, 1, 0, 0.5, 0.5], [3, 2])
    const idx = tf.tensor2d([0, 1, 3, 3, 1, 2], [3, 2], 'int32')
    const dense = tf.tensor2d([0.2, 0.8, 0, 0, 0, 0, 0, 1, 0, 0.5, 0.5, 0], [3, 4]) // the same weights as a [K, N] matrix
    const f1 = (a: tf.Tensor) =>
      weightedRows(a as tf.Tensor2D, w, idx)
        .square()
        .sum()
    const f2 = (a: tf.Tensor) =>
      tf
        .matMul(dense, a as tf.Tensor2D)
        .square()
        .sum()
    expect(Array.from(tf.grad(f1)(x).dataSync())).toEqual(Array.from(tf.grad(f2)(x).dataSync()).map((v) => expect.closeTo(v, 5)))
    expect(f1(x).dataSync()[0]).toBeCloseTo(f2(x).dataSync()[0], 5)
    const gw = tf.grad((b: tf.Tensor) =>
      weightedRows(x, b as tf.Tensor2D, idx)
        .square()
        .sum(),
    )(w)
    expect(gw.shape).toEqual([3, 2])
    tf.dispose([x, w, idx, dense, gw])
  })

  const head: CorefHeadConfig = {...COREF_DEFAULTS, max_segment_len: 8, ffnn_size: 16, feature_size: 4, coref_depth: 2, max_span_width: 4}

  it('one document: a finite loss, gradients for the encoder and the head, no tensor left behind', () => {
    const model = CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 1)
    const d = featurise(doc, tok, head.max_segment_len, [])
    expect(d.segments.length).toBeGreaterThan(1)
    const before = tf.memory().numTensors
    const {value, grads} = tf.variableGrads(
      () => model.loss(d, {training: true, rng: new Rng(1)}),
      model.params.entries().map(([, v]) => v),
    )
    expect(Number.isFinite(value.dataSync()[0])).toBe(true)
    const names = model.params
      .entries()
      .filter(([, v]) => grads[v.name])
      .map(([n]) => n)
    expect(names).toContain('bert.encoder.layer.0.attention.self.query.weight')
    expect(names).toContain('coref.slow_antecedent_scores.0.weight')
    expect(names).toContain('coref.f.weight')
    expect(Object.values(grads).every((g) => g.dataSync().every(Number.isFinite))).toBe(true)
    tf.dispose([value, ...Object.values(grads)])
    const clusters = model.predict(d)
    expect(clusters.flat().every(([s, e]) => s <= e && e < doc.words.length)).toBe(true)
    expect(tf.memory().numTensors).toBe(before)
    model.dispose()
  })
})
