// span's coreference scorer against what the official scorer (reference-coreference-scorers v8.01
// @f49f3f8a) printed for the hand-built cases in fixtures/coref/cases (tools/make-coref-goldens.ts).
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {minCostAssignment} from '../../../src/core/metrics/coref/assignment.js'
import {blancBySets, blancCounts} from '../../../src/core/metrics/coref/blanc.js'
import {perlNumber} from '../../../src/core/metrics/coref/report.js'
import {corefJson, corefTable} from '../../../src/core/metrics/coref/report.js'
import {evaluateCorefFiles} from '../../../src/core/tasks/coref/evaluate.js'

const FIX = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'coref')
interface Run {
  status: number
  stdout: string
  stderr: string
}
type Runs = Record<'muc' | 'bcub' | 'ceafm' | 'ceafe' | 'blanc', Run>
const golden = JSON.parse(readFileSync(join(FIX, 'golden-scorer.json'), 'utf8')) as {cases: Record<string, Runs>; real: Record<string, Runs & {md5?: string}>}

/** The scorer's `all` output assembled from its one-metric runs (what corefTable prints before its CoNLL line). */
export const scorerTable = (runs: Runs) => (['muc', 'bcub', 'ceafm', 'ceafe', 'blanc'] as const).map((m) => `\nMETRIC ${m}:\n${runs[m].stdout}`).join('')
const withoutConll = (table: string) => table.replace(/\nCoNLL-2012 F1[^\n]*\n$/, '')

describe('eval coref against the official scorer', () => {
  const names = Object.keys(golden.cases)
  it('has the hand-built cases', () => {
    for (const n of [
      'merged',
      'split',
      'shifted',
      'spurious',
      'missing',
      'nested',
      'singletons-dropped',
      'empty-key',
      'missing-extra-doc',
      'repeated-response',
      'repeated-key',
      'random',
    ])
      expect(names).toContain(n)
  })
  for (const name of names) {
    const runs = golden.cases[name] as Runs
    it(`${name}: prints what the scorer prints`, () => {
      const run = () => evaluateCorefFiles(join(FIX, 'cases', `${name}.key.conll`), join(FIX, 'cases', `${name}.response.conll`))
      if (runs.muc.status !== 0) {
        expect(runs.muc.stderr).toMatch(/too many repeated mentions/)
        expect(run).toThrow(/repeated mentions .* the official scorer refuses more than 10/)
        return
      }
      expect(withoutConll(corefTable(run()))).toBe(scorerTable(runs))
    })
  }

  it('gives the CoNLL F1 as the mean of MUC, B³ and CEAFe F1, and JSON with counts', () => {
    const r = evaluateCorefFiles(join(FIX, 'cases', 'merged.key.conll'), join(FIX, 'cases', 'merged.response.conll'))
    const j = corefJson(r) as Record<string, {f1: number; recall_num: number}> & {conll_f1: number}
    expect(j.conll_f1).toBeCloseTo((j.muc.f1 + j.bcub.f1 + j.ceafe.f1) / 3, 12)
    expect(Object.keys(j)).toEqual(['muc', 'bcub', 'ceafm', 'ceafe', 'blanc', 'mentions', 'conll_f1'])
    expect(j.mentions.recall_num).toBe(9)
  })
})

describe('coref metric pieces', () => {
  it('prints numbers as Perl prints them (%.15g)', () => {
    expect(perlNumber(4 / 3)).toBe('1.33333333333333')
    expect(perlNumber(12)).toBe('12')
    expect(perlNumber(0.375)).toBe('0.375')
    expect(perlNumber(2 / 3 + 1000)).toBe('1000.66666666667')
    expect(perlNumber(0.00005)).toBe('5e-05')
  })
  it('finds a minimum-cost assignment', () => {
    expect(
      minCostAssignment([
        [4, 1, 3],
        [2, 0, 5],
        [3, 2, 2],
      ]),
    ).toEqual([1, 0, 2])
    expect(minCostAssignment([[1, 0, 1]])).toEqual([1])
  })
  it('counts BLANC links in closed form as the pair sets count them', () => {
    const key = [[0, 1, 2], [3, 4], [5]]
    const response = [
      [0, 1],
      [2, 3, 9],
      [4, 5, 8],
    ]
    const closed = blancCounts(key, response)
    expect(closed).toEqual(blancBySets(key, response))
    expect(closed).toEqual({cCorrect: 1, cKey: 4, cResponse: 7, nCorrect: 9, nKey: 11, nResponse: 21})
    // an id twice in the key: the scorer's pair sets ("3-3" is a link)
    expect(
      blancCounts(
        [
          [0, 3],
          [3, 4],
        ],
        [[0, 3, 4]],
      ),
    ).toEqual({cCorrect: 2, cKey: 2, cResponse: 3, nCorrect: 0, nKey: 4, nResponse: 0})
  })
})
