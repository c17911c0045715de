import {join} from 'node:path'
import {expect, it} from 'vitest'
import {SHARED_DATA, describeShared, ifShared} from '../../helpers/shared-data.js'
import {SquadFeaturizer, bestIndexes, decodeQuestion, getFinalText, softmax, spanText, type FeatureLogits, type SquadExample, type SquadFeature} from '../../../src/core/tasks/squad/index.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'vocab/bert-base-uncased.txt', 'squad')

const DATA = SHARED_DATA
const cased = ifShared(['vocab/bert-base-cased.txt'], () => new WordPieceTokenizer(loadVocab(join(DATA, 'vocab', 'bert-base-cased.txt')), {lowercase: false}))
const uncased = ifShared(['vocab/bert-base-uncased.txt'], () => new WordPieceTokenizer(loadVocab(join(DATA, 'vocab', 'bert-base-uncased.txt')), {lowercase: true}))
const basic = (t: string) => cased.basic(t)

const CONTEXT = 'Rollo was a Viking leader. He founded Normandy in 911 and ruled it until 927.'
const ex = (context = CONTEXT): SquadExample => ({id: 'q1', title: '', question: 'Who founded Normandy?', context, answers: [], isImpossible: false})

/** Logits of a feature: −10 everywhere but the given [token text, value] pairs (first match after the question). */
function logits(f: SquadFeature, start: [string, number][], end: [string, number][], cls: [number, number] = [-10, -10]): FeatureLogits {
  const at = (t: string) => {
    const i = f.tokens.indexOf(t, f.docOffset)
    if (i < 0) throw new Error(`no token ${t} in window ${f.window}`)
    return i
  }
  const s = new Float64Array(f.tokens.length + 3).fill(-10) // longer than the tokens: padding is ignored
  const e = new Float64Array(f.tokens.length + 3).fill(-10)
  for (const [t, v] of start) s[at(t)] = v
  for (const [t, v] of end) e[at(t)] = v
  ;[s[0], e[0]] = cls
  return {start: s, end: e}
}

function setup(context = CONTEXT, opts = {}) {
  const fz = new SquadFeaturizer(cased, opts)
  const {features} = fz.features(ex(context), 0, false)
  return {doc: fz.doc(context), features}
}

describe('write_predictions helpers', () => {
  it('_get_best_indexes keeps position order among ties; _compute_softmax is stable', () => {
    expect(bestIndexes([1, 3, 3, 2, 3], 3)).toEqual([1, 2, 4])
    expect(softmax([1000, 1000])).toEqual([0.5, 0.5])
    expect(softmax([])).toEqual([])
  })

  it('_get_best_indexes is the stable sort of run_squad, taken in one pass (many ties, fewer positions than n)', () => {
    let seed = 7
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31)
    const sorted = (xs: number[], n: number) => xs.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, n).map(([, i]) => i)
    for (let t = 0; t < 200; t++) {
      const xs = Array.from({length: 1 + (next() % 60)}, () => (next() % 9) - 4)
      for (const n of [1, 3, 20, 80]) expect(bestIndexes(xs, n)).toEqual(sorted(xs, n))
    }
  })

  it('get_final_text: "steve smith" in "Steve Smith\'s" (the reference comment), or the whole text when unsure', () => {
    const b = (t: string) => uncased.basic(t)
    expect(getFinalText('steve smith', "Steve Smith's", b)).toBe('Steve Smith')
    expect(getFinalText('jose', 'José,', b)).toBe('José')
    expect(getFinalText('bob', 'Steve', b)).toBe('Steve')
    expect(getFinalText('[UNK]', 'Steve', b)).toBe('Steve')
  })

  it('maps spans to the passage\'s own characters, its whitespace included', () => {
    const {doc, features} = setup('They  reached\tNew  York. Then')
    const f = features[0]
    const i = (t: string) => f.tokens.indexOf(t, f.docOffset)
    expect(spanText(doc, f, i('reached'), i('York'), basic)).toEqual({text: 'reached\tNew  York', charStart: 6, charEnd: 23})
    expect(spanText(doc, f, i('York'), i('.'), basic).text).toBe('York.')
  })
})

describe('decoding one question', () => {
  it('v1.1: the best start × end pair, n-best with distinct texts and softmax probabilities', () => {
    const {doc, features} = setup()
    const l = logits(features[0], [['Roll', 5], ['Normandy', 4]], [['leader', 5], ['Normandy', 3], ['##o', 2]])
    const p = decodeQuestion('q1', doc, features, [l], basic)
    expect(p.text).toBe('Rollo was a Viking leader')
    expect(p.nullOdds).toBeUndefined()
    // ties keep the order start index × end index: (Roll, ##o) before (Normandy, Normandy)
    expect(p.nbest.slice(0, 4).map((e) => [e.text, e.start_logit, e.end_logit])).toEqual([
      ['Rollo was a Viking leader', 5, 5],
      ['Rollo was a Viking leader. He founded Normandy', 5, 3],
      ['Rollo', 5, 2],
      ['Normandy', 4, 3],
    ])
    expect(p.nbest).toHaveLength(20)
    expect(new Set(p.nbest.map((e) => e.text)).size).toBe(20)
    expect(p.nbest.reduce((a, e) => a + e.probability, 0)).toBeCloseTo(1, 12)
    const scores = p.nbest.map((e) => e.start_logit + e.end_logit)
    expect(scores).toEqual([...scores].sort((a, b) => b - a))
  })

  it('skips spans longer than maxAnswerLen and ends before starts', () => {
    const {doc, features} = setup()
    // (Roll, He) 20 over 8 tokens; (Roll, until) 19.5 over 17; (Normandy, He) 18 ends before it starts; (Normandy, until) 17.5 over 7
    const l = logits(features[0], [['Roll', 10], ['Normandy', 8]], [['He', 10], ['until', 9.5]])
    expect(decodeQuestion('q1', doc, features, [l], basic).text).toBe('Rollo was a Viking leader. He')
    expect(decodeQuestion('q1', doc, features, [l], basic, {maxAnswerLen: 7}).text).toBe('Normandy in 911 and ruled it until')
    expect(decodeQuestion('q1', doc, features, [l], basic, {maxAnswerLen: 7, nBest: 1}).text).toBe('empty') // the reference's nonce
  })

  it('takes a start only from the window where that token has its maximal context', () => {
    const {doc, features} = setup(CONTEXT, {maxLen: 16, docStride: 2, maxQueryLen: 8})
    const k = features.map((f) => f.tokens.indexOf('Normandy', f.docOffset))
    const owners = features.filter((f, w) => k[w] >= 0 && f.maxContext[k[w]])
    const others = features.filter((f, w) => k[w] >= 0 && !f.maxContext[k[w]])
    expect([owners.length, others.length >= 1]).toEqual([1, true])
    const ls = features.map((f) => (others.includes(f) ? logits(f, [['Normandy', 9]], [['Normandy', 9]]) : f === owners[0] ? logits(f, [['founded', 2]], [['Normandy', 2]]) : logits(f, [], [])))
    expect(decodeQuestion('q1', doc, features, ls, basic).text).toBe('founded Normandy')
    const ls2 = features.map((f, w) => (f === owners[0] ? logits(f, [['Normandy', 1]], [['Normandy', 1]]) : ls[w]))
    expect(decodeQuestion('q1', doc, features, ls2, basic).text).toBe('Normandy')
  })

  it('v2.0: the null score is the minimum over windows; "" when null − best span exceeds the threshold', () => {
    const {doc, features} = setup(CONTEXT, {maxLen: 24, docStride: 4, maxQueryLen: 8})
    expect(features.length).toBeGreaterThan(1)
    const ls = features.map((f, w) => logits(f, w === 0 ? [['Roll', 3]] : [], w === 0 ? [['##o', 3]] : [], w === 1 ? [1, 1] : [4, 4]))
    const p = decodeQuestion('q1', doc, features, ls, basic, {v2: true})
    expect([p.text, p.nullOdds]).toEqual(['Rollo', 2 - 6])
    expect(p.nbest.map((e) => e.text)).toContain('')
    expect(p.nbest.find((e) => e.text === '')).toMatchObject({start_logit: 1, end_logit: 1})
    expect(decodeQuestion('q1', doc, features, ls, basic, {v2: true, nullThreshold: -4.5}).text).toBe('')
    expect(decodeQuestion('q1', doc, features, ls, basic, {v2: true, nullThreshold: -4}).text).toBe('Rollo')
  })

  it('v2.0 without any valid span: the nonce "empty" against the null answer (as Hugging Face\'s port)', () => {
    const {doc, features} = setup()
    const p = decodeQuestion('q1', doc, features, [logits(features[0], [], [], [0.5, 0.25])], basic, {v2: true, maxAnswerLen: 0})
    expect(p.nbest.map((e) => e.text)).toEqual(['empty', ''])
    expect([p.text, p.nullOdds]).toEqual(['', 0.75])
  })

  it('a question without windows (an empty passage) decodes like the reference: "empty", or "" for v2.0', () => {
    const {doc, features} = setup('   ')
    expect(features).toEqual([])
    expect(decodeQuestion('q1', doc, [], [], basic).text).toBe('empty')
    expect(decodeQuestion('q1', doc, [], [], basic, {v2: true}).text).toBe('')
  })

  it('refuses logits that do not match the features', () => {
    const {doc, features} = setup()
    expect(() => decodeQuestion('q1', doc, features, [], basic)).toThrow('1 features but 0 logits')
  })
})
