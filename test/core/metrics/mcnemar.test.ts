import {describe, expect, it} from 'vitest'
import {chi2Sf1, chiSquare, erfc, exactP, mcnemar} from '../../../src/core/metrics/mcnemar.js'

/** gold all 1; A and B right/wrong in the four combinations, `n` times each. */
function pairs(bothRight: number, onlyA: number, onlyB: number, bothWrong: number) {
  const gold: number[] = []
  const a: number[] = []
  const b: number[] = []
  const add = (n: number, ra: boolean, rb: boolean) => {
    for (let i = 0; i < n; i++) {
      gold.push(1)
      a.push(ra ? 1 : 0)
      b.push(rb ? 1 : 0)
    }
  }
  add(bothRight, true, true)
  add(onlyA, true, false)
  add(onlyB, false, true)
  add(bothWrong, false, false)
  return {gold, a, b}
}

describe('erfc and the chi-square(1) survival function', () => {
  it('matches Python math.erfc to ~1e-14 relative across both branches', () => {
    const known: [number, number][] = [
      [0.1, 0.8875370839817152],
      [0.5, 0.4795001221869535],
      [1.0, 0.15729920705028513],
      [1.9, 0.0072095707647425325],
      [2.0, 0.004677734981047265],
      [2.5, 0.0004069520174449589],
      [3, 2.2090496998585438e-5],
      [5, 1.5374597944280351e-12],
      [10, 2.088487583762545e-45],
      [26, 5.663192408856143e-296],
    ]
    for (const [z, v] of known) expect(Math.abs(erfc(z) - v) / v).toBeLessThan(1e-13)
    expect(erfc(0)).toBe(1)
    expect(erfc(-1)).toBeCloseTo(2 - 0.15729920705028513, 15)
    expect(chi2Sf1(0)).toBe(1)
    expect(chi2Sf1(3.841458820694124)).toBeCloseTo(0.05, 12) // the 95% critical value
  })
})

describe("McNemar's test", () => {
  it('exact binomial below 25 discordant pairs: b=3, c=10 → 2·(1+13+78+286)/2^13', () => {
    const {gold, a, b} = pairs(50, 3, 10, 7)
    const r = mcnemar(gold, a, b)
    expect([r.n, r.correctA, r.correctB, r.b, r.c, r.test, r.statistic]).toEqual([70, 53, 60, 3, 10, 'exact', 3])
    expect(r.pValue).toBeCloseTo(0.09228515625, 14) // statsmodels mcnemar([[50,3],[10,7]], exact=True)
  })

  it('exact p is capped at 1 and is 1 with no discordant pairs', () => {
    expect(exactP(5, 5)).toBe(1)
    expect(exactP(0, 0)).toBe(1)
    expect(exactP(0, 1)).toBe(1) // 2 · 1/2
    expect(exactP(0, 5)).toBeCloseTo(2 / 32, 15)
    expect(exactP(12, 12)).toBe(1)
  })

  it('chi-square with continuity correction from 25 on: b=30, c=15', () => {
    const {gold, a, b} = pairs(100, 30, 15, 5)
    const r = mcnemar(gold, a, b)
    expect([r.b, r.c, r.test]).toEqual([30, 15, 'chi2'])
    expect(r.statistic).toBeCloseTo(196 / 45, 14) // (|30−15|−1)²/45
    expect(r.pValue).toBeCloseTo(0.03688842570704985, 14) // statsmodels exact=False, correction=True
  })

  it('more chi-square cases (values from math.erfc(sqrt(x/2)))', () => {
    expect(chiSquare(100, 60)[1]).toBeCloseTo(0.0020477321536687596, 15)
    expect(chiSquare(12, 40)[0]).toBeCloseTo(729 / 52, 13)
    expect(chiSquare(12, 40)[1]).toBeCloseTo(0.0001809504904375634, 15)
    expect(chiSquare(0, 0)).toEqual([0, 1])
  })

  it('the switch is at b + c = 25, and a test can be forced', () => {
    expect(mcnemar(...arr(pairs(0, 12, 12, 0))).test).toBe('exact')
    expect(mcnemar(...arr(pairs(0, 12, 13, 0))).test).toBe('chi2')
    const forced = mcnemar(...arr(pairs(0, 3, 10, 0)), 'chi2')
    expect([forced.test, forced.statistic]).toEqual(['chi2', 36 / 13]) // (|3−10|−1)²/13
    const big = mcnemar(...arr(pairs(0, 400, 600, 0)), 'exact')
    expect(big.pValue).toBeGreaterThan(0)
    expect(big.pValue).toBeLessThan(1e-9) // log space: no underflow of 2^-1000
  })

  it('works on label strings (3-class MNLI) and rejects bad input', () => {
    const r = mcnemar(['neutral', 'entailment', 'contradiction'], ['neutral', 'neutral', 'contradiction'], ['entailment', 'entailment', 'contradiction'])
    expect([r.b, r.c, r.correctA, r.correctB]).toEqual([1, 1, 2, 2])
    expect(() => mcnemar([], [], [])).toThrow('no examples')
    expect(() => mcnemar([1, 0], [1], [1, 0])).toThrow('2 gold labels, 1 and 2 predictions')
  })
})

function arr(p: {gold: number[]; a: number[]; b: number[]}): [number[], number[], number[]] {
  return [p.gold, p.a, p.b]
}
