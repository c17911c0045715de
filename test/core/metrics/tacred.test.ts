import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {relationTable, scoreRelations} from '../../../src/core/metrics/tacred.js'

const golden = JSON.parse(readFileSync(join(__dirname, '..', '..', '..', 'fixtures', 'tacred', 'golden-scorer.json'), 'utf8'))
interface Case {
  name: string
  negative: string
  gold: string[]
  pred: string[]
  precision: number
  recall: number
  f1: number
  stdout: string
}

describe('TACRED scorer port against utils/scorer.py (fixtures/tacred/golden-scorer.json)', () => {
  it.each((golden.cases as Case[]).map((c) => [c.name, c]))('%s', (_, c) => {
    const r = scoreRelations((c as Case).gold, (c as Case).pred, (c as Case).negative)
    expect([r.precision, r.recall, r.f1]).toEqual([(c as Case).precision, (c as Case).recall, (c as Case).f1])
    expect(relationTable(r)).toBe((c as Case).stdout)
  })

  it('gives precision 1.0 when nothing positive is predicted, as the scorer has it', () => {
    expect(scoreRelations(['per:title', 'no_relation'], ['no_relation', 'no_relation']).precision).toBe(1.0)
  })

  it('refuses lists of different lengths', () => {
    expect(() => scoreRelations(['a'], [])).toThrow(/same number of elements/)
  })
})
