// The start-to-end head (--head s2e, Kirstain et al. 2021): its scores against a host computation
// of the paper's formulas, output shapes, the loss's invariants, a tiny model that learns a
// synthetic document, and no tensor left behind.
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {COREF_DEFAULTS, type CorefHeadConfig} from '../../../src/core/tasks/coref/config.js'
import {parseConll} from '../../../src/core/tasks/coref/conll.js'
import {antecedentLabels, marginalLoss} from '../../../src/core/tasks/coref/loss.js'
import {CorefModel} from '../../../src/core/tasks/coref/model.js'
import {allEarlier, s2eAntecedentScores, s2eMentionScores} from '../../../src/core/tasks/coref/s2e.js'
import {featurise} from '../../../src/core/tasks/coref/segments.js'
import {Rng} from '../../../src/core/util/rng.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab} from '../train/helpers.js'
import {litbankDoc} from './coref-helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: true})
const head: CorefHeadConfig = {...COREF_DEFAULTS, head_type: 's2e', max_segment_len: 12, max_training_segments: 2, ffnn_size: 8, max_span_width: 4, dropout: 0}
const doc = (n = 2) => featurise(parseConll(litbankDoc('a', n), 'mem.conll')[0], tok, head.max_segment_len, [])
const newModel = (seed = 1, h = head) => CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), h, seed)
const host = (t: tf.Tensor) => Array.from(t.dataSync())
const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i], 0)
/** x W + b for W [out, in] (nn.Linear) on the host. */
const lin = (w: number[], b: number[], x: number[]) => b.map((bo, o) => bo + dot(w.slice(o * x.length, (o + 1) * x.length), x))

beforeAll(async () => {
  await initBackend('cpu')
})

describe('--head s2e', () => {
  it('mention and antecedent scores are the paper’s bilinear forms', () => {
    const model = newModel()
    const p = (n: string) => host(model.params.get(`coref.s2e.${n}`))
    const rng = new Rng(5)
    const F = head.ffnn_size
    const rows = (n: number) => Array.from({length: n}, () => Array.from({length: F}, () => rng.float() - 0.5))
    const [ms, me, cs, ce] = [rows(3), rows(3), rows(2), rows(2)]
    const t = (r: number[][]) => tf.tensor2d(r)
    const m = {p: model.params, h: head, ctx: EVAL}
    const starts = Int32Array.from([0, 1])
    const ends = Int32Array.from([1, 2])
    const reps = {ms: t(ms), me: t(me), cs: t(cs), ce: t(ce)}
    const got = s2eMentionScores(m, reps, starts, ends)
    const want = [0, 1].map((i) => {
      const [s, e] = [ms[starts[i]], me[ends[i]]]
      const unary =
        lin(p('mention_start_classifier.weight'), p('mention_start_classifier.bias'), s)[0] +
        lin(p('mention_end_classifier.weight'), p('mention_end_classifier.bias'), e)[0]
      return unary + dot(lin(p('mention_s2e_classifier.weight'), p('mention_s2e_classifier.bias'), s), e)
    })
    expect(host(got)).toEqual(want.map((v) => expect.closeTo(v, 4)))
    const ment = tf.tensor1d([0.5, -1])
    const a = s2eAntecedentScores(m, reps.cs, reps.ce, ment)
    const bil = (n: string, x: number[], y: number[]) => dot(lin(p(`antecedent_${n}_classifier.weight`), p(`antecedent_${n}_classifier.bias`), x), y)
    const pair = bil('s2s', cs[1], cs[0]) + bil('e2e', ce[1], ce[0]) + bil('s2e', cs[1], ce[0]) + bil('e2s', ce[1], cs[0])
    expect(host(a)).toEqual([-Infinity, -Infinity, expect.closeTo(pair + 0.5 - 1, 4), -Infinity]) // only span 1 → span 0
    tf.dispose([got, ment, a, ...Object.values(reps)])
    model.dispose()
  })

  it('every earlier span is an antecedent', () => {
    const a = allEarlier(3)
    expect([a.c, Array.from(a.index), Array.from(a.mask)]).toEqual([3, [0, 1, 2, 0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 0, 0, 1, 1, 0]])
  })

  it('one document: shapes, the loss as the marginal log-likelihood of its scores (≥ 0), gradients, no tensor left behind', () => {
    const model = newModel()
    const d = doc()
    const before = tf.memory().numTensors
    tf.tidy(() => {
      const o = model.forward(d, EVAL)
      const k = Math.floor(d.wordOf.length * head.top_span_ratio)
      expect([o.starts.length, o.scores.shape, o.ant.c]).toEqual([k, [k, k + 1], k])
      expect(Array.from(o.starts).every((s, i) => i === 0 || s >= o.starts[i - 1])).toBe(true)
      const cross = (i: number, j: number) => o.starts[i] < o.starts[j] && o.starts[j] <= o.ends[i] && o.ends[i] < o.ends[j]
      expect(Array.from(o.starts).some((_, i) => Array.from(o.starts).some((__, j) => cross(i, j)))).toBe(false) // CoNLL-writable
      expect(host(o.scores.slice([0, 0], [1, -1]))).toEqual([0, ...Array(k).fill(-Infinity)]) // span 0: the dummy alone
      const want = marginalLoss(o.scores, antecedentLabels(o.cluster, o.ant)).dataSync()[0]
      const loss = model.loss(d, EVAL).dataSync()[0]
      expect(loss).toBeCloseTo(want, 4)
      expect(loss).toBeGreaterThanOrEqual(0)
    })
    const {value, grads} = tf.variableGrads(
      () => model.loss(d, {training: true, rng: new Rng(1)}),
      model.params.entries().map(([, v]) => v),
    )
    const names = model.params
      .entries()
      .filter(([, v]) => grads[v.name])
      .map(([n]) => n)
    expect(names).toEqual(
      expect.arrayContaining([
        'bert.embeddings.word_embeddings.weight',
        'coref.s2e.antecedent_e2s_classifier.weight',
        'coref.s2e.mention_s2e_classifier.weight',
      ]),
    )
    expect(names.some((n) => n.startsWith('coref.') && !n.startsWith('coref.s2e.'))).toBe(false) // no span-vector parameters
    expect(Object.values(grads).every((g) => g.dataSync().every(Number.isFinite))).toBe(true)
    tf.dispose([value, ...Object.values(grads)])
    model.predict(d)
    expect(tf.memory().numTensors).toBe(before)
    model.dispose()
  })

  it('learns: 25 Adam steps on one synthetic document cut its loss by more than half and recover its links', () => {
    const model = newModel(2, {...head, top_span_ratio: 1}) // 8 of the document's 16 words are mentions
    const d = doc(1)
    const opt = tf.train.adam(1e-2)
    const vars = model.params.entries().map(([, v]) => v)
    const losses: number[] = []
    for (let step = 0; step < 25; step++) {
      const l = opt.minimize(() => model.loss(d, EVAL), true, vars) as tf.Scalar
      losses.push(l.dataSync()[0])
      l.dispose()
    }
    expect(losses.at(-1)).toBeLessThan(0.5 * losses[0])
    const predicted = model.predict(d)
    const gold = parseConll(litbankDoc('a', 1), 'mem.conll')[0].clusters
    const links = (cs: [number, number][][]) => new Set(cs.flatMap((c) => c.slice(1).map((m, i) => `${c[i]}→${m}`)))
    const found = [...links(predicted)].filter((l) => links(gold).has(l)).length
    expect(found).toBeGreaterThan(0)
    opt.dispose()
    model.dispose()
  })
})
