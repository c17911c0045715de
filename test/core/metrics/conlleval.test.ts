import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ConllFormatError, conllCount, conllScores, conllTable, splitConllLine} from '../../../src/core/metrics/conlleval.js'
import {cFixed} from '../../../src/core/metrics/cformat.js'

const ROOT = join(__dirname, '..', '..', '..')
const golden = JSON.parse(readFileSync(join(ROOT, 'fixtures', 'ner', 'golden-conlleval.json'), 'utf8'))
interface Case {
  name: string
  input: string
  stdout: string
  stderr: string
  exit: number
}

/** The script reads lines with chomp; a final line without \n still counts. */
const lines = (text: string) => {
  const ls = text.split('\n')
  if (ls[ls.length - 1] === '') ls.pop()
  return ls.map((l) => splitConllLine(l))
}

describe('conlleval port against the official Perl script (fixtures/ner/golden-conlleval.json)', () => {
  const ok = (golden.cases as Case[]).filter((c) => c.exit === 0)
  it.each(ok.map((c) => [c.name, c]))('%s: the same table, byte for byte', (_, c) => {
    expect(conllTable(conllCount(lines((c as Case).input)))).toBe((c as Case).stdout)
  })

  it('rejects a line with a different number of fields, as the script does', () => {
    const bad = (golden.cases as Case[]).find((c) => c.exit !== 0) as Case
    expect(() => conllCount(lines(bad.input))).toThrow(ConllFormatError)
    try {
      conllCount(lines(bad.input))
    } catch (e) {
      expect(`${(e as Error).message}\n`).toBe(bad.stderr)
      expect((e as ConllFormatError).line).toBe(2)
    }
  })

  const real = join(ROOT, '..', 'shared', 'data', 'conll2003', 'eng.testa')
  it.skipIf(!existsSync(real) || !golden.real)('eng.testa with every 7th tag flipped (needs ../shared/data)', () => {
    const text = readFileSync(real, 'utf8')
    const rows = text.split('\n').map((line, i) => {
      if (line === '') return []
      const f = line.split(' ')
      return [...f, i % 7 ? f[f.length - 1] : f[f.length - 1] !== 'O' ? 'O' : 'I-MISC']
    })
    if (rows[rows.length - 1].length === 0) rows.pop()
    expect(conllTable(conllCount(rows))).toBe(golden.real.stdout)
  })
})

describe('conlleval semantics', () => {
  it('counts -DOCSTART- lines as tokens and keeps unrounded percentages for --json', () => {
    const c = conllCount(lines('-DOCSTART- O O\n\na I-PER I-PER\nb O I-LOC\n'))
    expect(c.tokens).toBe(3)
    const s = conllScores(c)
    expect(s.precision).toBe(50)
    expect(s.recall).toBe(100)
    expect(s.f1).toBeCloseTo(200 / 3, 12)
    expect(Object.keys(s.per_type)).toEqual(['LOC', 'PER'])
  })

  it('splits on single spaces like Perl split(/ /): leading empties kept, trailing dropped', () => {
    expect(splitConllLine('  a  b c  ')).toEqual(['', '', 'a', '', 'b', 'c'])
  })

  it('%6.2f rounds exact ties to even as glibc does (toFixed would not)', () => {
    expect(cFixed(3.125, 2, 6)).toBe('  3.12')
    expect(cFixed(3.375, 2, 6)).toBe('  3.38')
    expect(cFixed((2 / 3) * 100, 2, 6)).toBe(' 66.67')
    expect(cFixed(100, 2, 6)).toBe('100.00')
  })
})
