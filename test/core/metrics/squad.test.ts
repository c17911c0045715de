import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {describeShared} from '../../helpers/shared-data.js'
import {computeF1, evaluateV1, evaluateV2, f1ScoreV1, normalizeAnswer, type GoldQuestion} from '../../../src/core/metrics/squad.js'
import {formatV1Json, formatV2Json, pyFloat} from '../../../src/core/metrics/squad-format.js'
import {pySplit} from '../../../src/core/metrics/squad-normalize.js'

const FIXTURES = join(__dirname, '..', '..', '..', 'fixtures', 'squad')
const load = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'))

interface RawDataset {
  data: {paragraphs: {qas: {id: string; answers: {text: string}[]}[]}[]}[]
}
interface Case {
  name: string
  data: RawDataset
  predictions: Record<string, string>
  na_probs?: Record<string, number>
  na_prob_thresh?: number
  expected: Record<string, number>
  stdout: string
}

const questions = (d: RawDataset): GoldQuestion[] => d.data.flatMap((a) => a.paragraphs.flatMap((p) => p.qas.map((q) => ({id: q.id, answers: q.answers.map((x) => x.text)}))))
const asMap = <T>(o: Record<string, T>) => new Map(Object.entries(o))

/** Same keys in the same order, every number within 1e-9. */
function expectClose(actual: Record<string, number>, expected: Record<string, number>): void {
  expect(Object.keys(actual)).toEqual(Object.keys(expected))
  for (const k of Object.keys(expected)) expect(Math.abs(actual[k] - expected[k]), k).toBeLessThanOrEqual(1e-9)
}

describe('normalize_answer against the official script (golden-normalize.json)', () => {
  const cases = load('golden-normalize.json').cases as {text: string; normalized: string}[]
  it.each(cases.map((c) => [JSON.stringify(c.text), c]))('%s', (_, c) => {
    expect(normalizeAnswer(c.text)).toBe(c.normalized)
  })

  it('splits on Python whitespace (NBSP, U+3000, U+001C, U+0085) but not on U+200B or U+FEFF', () => {
    expect(pySplit('a\u00a0b\u3000c\x1cd\x85e')).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(pySplit(' a\u200bb\ufeffc ')).toEqual(['a\u200bb\ufeffc'])
  })

  it('keeps non-ASCII punctuation and drops articles only as whole Unicode words', () => {
    expect(normalizeAnswer('“The” ‘an’ – — « »')).toBe('“ ” ‘ ’ – — « »')
    expect(normalizeAnswer('théâtre the éthe a1 a')).toBe('théâtre éthe a1')
  })
})

describe('the v1.1 and v2.0 token F1 differ on empty answers, as the official scripts do', () => {
  it('v1.1 gives 0 when nothing is shared, even two empty texts; v2.0 gives 1 for agreeing empties', () => {
    expect(f1ScoreV1('', '')).toBe(0)
    expect(computeF1('', '')).toBe(1)
    expect(computeF1('the', '')).toBe(1) // both normalise to no tokens
    expect(computeF1('', 'x')).toBe(0)
    expect(f1ScoreV1('cat cat dog', 'cat dog dog')).toBeCloseTo(2 / 3, 12)
  })
})

describe('evaluate-v1.1 goldens', () => {
  const cases = load('golden-v1.json').cases as Case[]
  it.each(cases.map((c) => [c.name, c]))('%s', (_, c) => {
    const r = evaluateV1(questions(c.data), asMap(c.predictions))
    expectClose({...r}, c.expected)
    expect(formatV1Json(r)).toBe(c.stdout)
  })
})

describe('evaluate-v2.0 goldens', () => {
  const cases = load('golden-v2.json').cases as Case[]
  it.each(cases.map((c) => [c.name, c]))('%s', (_, c) => {
    const r = evaluateV2(questions(c.data), asMap(c.predictions), {naProbs: c.na_probs && asMap(c.na_probs), naProbThresh: c.na_prob_thresh})
    expectClose(r, c.expected)
    expect(formatV2Json(r)).toBe(c.stdout)
  })

  it('the tie cases really depend on the na-prob file order (find_best_thresh is order-sensitive)', () => {
    const [a, b] = ['ties-in-na-probs', 'ties-in-na-probs-other-order'].map((n) => cases.find((c) => c.name === n) as Case)
    expect(a.expected.best_exact).not.toBe(b.expected.best_exact)
  })
})

describe('missing predictions count as wrong', () => {
  const qs: GoldQuestion[] = [
    {id: 'a', answers: ['Rollo']},
    {id: 'u', answers: []},
  ]
  it('v2.0: a missing unanswerable question is wrong, not a correct abstention, at every threshold', () => {
    const r = evaluateV2(qs, new Map([['a', 'Rollo']]), {naProbs: new Map([['a', 0.1], ['u', 0.9]])})
    expect(r).toMatchObject({exact: 50, f1: 50, total: 2, HasAns_exact: 100, NoAns_exact: 0, NoAns_total: 1, best_exact: 50, best_exact_thresh: 0.1})
  })
  it('v1.1: the question still counts in the total', () => {
    expect(evaluateV1([qs[0], {id: 'b', answers: ['x']}], new Map([['a', 'rollo']]))).toEqual({exact_match: 50, f1: 50})
  })
  it('refuses a v1.1 question without gold answers and an empty dataset', () => {
    expect(() => evaluateV1(qs, new Map([['u', '']]))).toThrow('question u has no gold answers')
    expect(() => evaluateV2([], new Map())).toThrow('no questions')
  })
})

describe('pyFloat writes floats as Python repr() does', () => {
  const cases: [number, string][] = [
    [1e-5, '1e-05'], [0.0001, '0.0001'], [1e16, '1e+16'], [123, '123.0'], [9999999999999998, '9999999999999998.0'],
    [-3.5, '-3.5'], [62.8888888888889, '62.8888888888889'], [1.5e-7, '1.5e-07'], [1.2345e20, '1.2345e+20'], [0.1, '0.1'],
    [-0, '-0.0'], [5e-324, '5e-324'], [1.7976931348623157e308, '1.7976931348623157e+308'], [123456789012345.6, '123456789012345.6'], [0.00012, '0.00012'],
  ]
  it.each(cases)('%s → %s', (x, s) => expect(pyFloat(x)).toBe(s))
})

describeShared('squad/xquad.en.json', 'squad/squad-v2.0-dev-subset-normans-rhine.json')('goldens on real data: made-up predictions for XQuAD (v1.1) and the SQuAD 2.0 Normans/Rhine subset', () => {
  const cases = load('golden-real.json').cases as (Case & {dataset: string})[]
  it.each(cases.map((c) => [c.name, c]))('%s', (_, c) => {
    const data = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', c.dataset), 'utf8')) as RawDataset
    const qs = questions(data)
    const preds = asMap(c.predictions)
    if (c.na_probs) {
      const r = evaluateV2(qs, preds, {naProbs: asMap(c.na_probs), naProbThresh: c.na_prob_thresh})
      expectClose(r, c.expected)
      expect(formatV2Json(r)).toBe(c.stdout)
    } else {
      const r = evaluateV1(qs, preds)
      expectClose({...r}, c.expected)
      expect(formatV1Json(r)).toBe(c.stdout)
    }
  })
})
