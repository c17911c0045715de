import {describe, expect, it} from 'vitest'
import {accuracy, averageRanks, f1, matthews, pearson, spearman} from '../../../src/core/metrics/glue.js'
import {glueScores} from '../../../src/core/metrics/glue-score.js'

/** Collects the warnings a metric emits. */
function warnings(): [string[], (m: string) => void] {
  const seen: string[] = []
  return [seen, (m) => seen.push(m)]
}

// gold/pred with tp=3, tn=2, fp=2, fn=1 (hand-counted below)
const G = [1, 1, 1, 0, 0, 0, 1, 0]
const P = [1, 1, 0, 0, 1, 0, 1, 1]

describe('accuracy and F1', () => {
  it('counts agreement', () => {
    expect(accuracy(G, P)).toBe(5 / 8)
    expect(accuracy(['entailment', 'not_entailment'], ['entailment', 'entailment'])).toBe(0.5)
  })

  it('F1 of the positive class: 2tp / (2tp + fp + fn)', () => {
    expect(f1(G, P, 1)).toBe(6 / 9)
    expect(f1(G, P, 0)).toBe(4 / 7) // tp=2 (of class 0), fp=1, fn=2
  })

  it('F1 with no positives anywhere is 0 with a warning (sklearn zero_division)', () => {
    const [seen, warn] = warnings()
    expect(f1([0, 0], [0, 0], 1, warn)).toBe(0)
    expect(seen).toHaveLength(1)
    expect(f1([1, 0], [0, 0], 1)).toBe(0) // defined: tp = 0, fn = 1
  })

  it('rejects empty or unpaired input', () => {
    expect(() => accuracy([], [])).toThrow('accuracy: no examples')
    expect(() => f1([1], [1, 0], 1)).toThrow('F1: 1 gold labels but 2 predictions')
    expect(() => matthews([], [])).toThrow(/no examples/)
    expect(() => pearson([], [])).toThrow(/no examples/)
    expect(() => spearman([1], [])).toThrow(/1 gold labels but 0 predictions/)
  })
})

describe('Matthews correlation', () => {
  it('binary: (tp·tn − fp·fn) / sqrt((tp+fp)(tp+fn)(tn+fp)(tn+fn))', () => {
    expect(matthews(G, P)).toBeCloseTo(4 / Math.sqrt(5 * 4 * 4 * 3), 15)
    expect(matthews(G, G)).toBe(1)
    expect(matthews(G, G.map((g) => 1 - g))).toBe(-1)
  })

  it('multiclass as sklearn (Gorodkin R_K)', () => {
    // gold a a b b c c, pred a b b c c a: c=3, s=6, t=p=(2,2,2) → (3·6 − 12) / (36 − 12) = 0.25
    expect(matthews(['a', 'a', 'b', 'b', 'c', 'c'], ['a', 'b', 'b', 'c', 'c', 'a'])).toBeCloseTo(0.25, 15)
  })

  it('constant predictions give 0 with a warning', () => {
    const [seen, warn] = warnings()
    expect(matthews(G, G.map(() => 1), warn)).toBe(0)
    expect(seen[0]).toMatch(/Matthews correlation is undefined/)
    expect(matthews([0, 0, 0], [0, 1, 0], warn)).toBe(0) // constant gold
    expect(seen).toHaveLength(2)
  })
})

describe('Pearson and Spearman', () => {
  it('Pearson on a hand-computed case: sxy=8, sxx=syy=10', () => {
    expect(pearson([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])).toBeCloseTo(0.8, 15)
  })

  it('average ranks for ties (scipy rankdata "average")', () => {
    expect(averageRanks([1.0, 2.5, 2.5, 4.0, 0.5])).toEqual([2, 3.5, 3.5, 5, 1])
    expect(averageRanks([7, 7, 7])).toEqual([2, 2, 2])
  })

  it('Spearman with ties in both: ranks (2,3.5,3.5,5,1) vs (2,4.5,4.5,1,3) → −1.5/9.5', () => {
    const x = [1.0, 2.5, 2.5, 4.0, 0.5]
    const y = [0.2, 0.4, 0.4, 0.1, 0.3]
    expect(spearman(x, y)).toBeCloseTo(-3 / 19, 15)
    expect(pearson(x, y)).toBeCloseTo(-0.26257524659082143, 14) // numpy.corrcoef
  })

  it('a constant side gives 0 with a warning', () => {
    const [seen, warn] = warnings()
    expect(pearson([1, 2, 3], [2, 2, 2], warn)).toBe(0)
    expect(spearman([1, 2, 3], [2, 2, 2], warn)).toBe(0)
    expect(seen).toHaveLength(2)
  })
})

describe('task scores (GLUE definitions)', () => {
  const g = G.map(String)
  const p = P.map(String)

  it('CoLA: mcc; SST-2/RTE: acc', () => {
    expect(glueScores('mcc', g, p)).toEqual({n: 8, score: matthews(G, P), mcc: matthews(G, P)})
    expect(glueScores('acc', g, p)).toEqual({n: 8, score: 5 / 8, acc: 5 / 8})
  })

  it('MRPC/QQP: acc, F1 of label 1, and their mean as the score', () => {
    const s = glueScores('acc_f1', g, p)
    expect(s).toEqual({n: 8, score: (5 / 8 + 6 / 9) / 2, acc: 5 / 8, f1: 6 / 9, acc_and_f1: (5 / 8 + 6 / 9) / 2})
  })

  it('STS-B: pearson, spearmanr and their mean', () => {
    const s = glueScores('corr', ['1', '2', '3', '4', '5'], ['2', '1', '4', '3', '5'])
    expect(s.pearson).toBeCloseTo(0.8, 15)
    expect(s.spearmanr).toBeCloseTo(0.8, 15) // no ties: the ranks are the values
    expect(s.corr).toBeCloseTo(0.8, 15)
    expect(s.score).toBe(s.corr)
  })

  it('passes warnings through and rejects non-numbers for STS-B', () => {
    const [seen, warn] = warnings()
    expect(glueScores('mcc', ['0', '1'], ['1', '1'], warn).score).toBe(0)
    expect(seen).toHaveLength(1)
    expect(() => glueScores('corr', ['1', 'x'], ['1', '2'])).toThrow('not a number: "x"')
  })
})
