// span's coreference scorer on the real data against the official scorer's output stored by
// tools/make-coref-goldens.ts: LitBank and OntoGUM gold against themselves and against the seeded
// perturbation of tools/coref-perturb.ts (rebuilt here; its md5 must be the one the scorer read).
// Skipped without ../shared/data/coref or without the real-data goldens.
import {createHash} from 'node:crypto'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect, it} from 'vitest'
import {corefTable} from '../../../src/core/metrics/coref/report.js'
import {readConll} from '../../../src/core/tasks/coref/conll.js'
import {evaluateCorefFiles} from '../../../src/core/tasks/coref/evaluate.js'
import {PERTURB_SEED, perturbedResponse} from '../../../tools/coref-perturb.js'
import {describeShared, sharedPath} from '../../helpers/shared-data.js'

interface Run {
  stdout: string
}
type Case = Record<'muc' | 'bcub' | 'ceafm' | 'ceafe' | 'blanc', Run> & {md5?: string}
const golden = JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', '..', 'fixtures', 'coref', 'golden-scorer.json'), 'utf8')) as {
  real: Record<string, Case>
}
const scorerTable = (c: Case) => (['muc', 'bcub', 'ceafm', 'ceafe', 'blanc'] as const).map((m) => `\nMETRIC ${m}:\n${c[m].stdout}`).join('')

const NUMBER = /\d+(?:\.\d+)?(?:e[-+]\d+)?/g

/** Each run of "Repeated mention" lines sorted: the scorer prints them document by document in Perl's hash order. */
const sortRepeats = (table: string) =>
  table.replace(/(?:Repeated mention[^\n]*\n)+/g, (run) =>
    run
      .split('\n')
      .filter(Boolean)
      .sort()
      .map((l) => l + '\n')
      .join(''),
  )

/**
 * Equal text and numbers, except that a fractional numerator (a number before " / ") may differ
 * by 1e-12 relative, and repeated-mention lines may come in another order: the scorer takes
 * documents in Perl's hash order (docs/algorithms.md).
 */
function expectSameTable(oursTable: string, theirsTable: string): void {
  const [ours, theirs] = [sortRepeats(oursTable), sortRepeats(theirsTable)]
  expect(ours.replace(NUMBER, '#')).toBe(theirs.replace(NUMBER, '#'))
  const a = [...ours.matchAll(NUMBER)]
  const b = [...theirs.matchAll(NUMBER)]
  a.forEach((m, i) => {
    const t = b[i] as RegExpMatchArray
    if (m[0] === t[0]) return
    const numerator = ours.slice((m.index as number) + m[0].length).startsWith(' / ')
    expect([numerator, Math.abs(Number(m[0]) - Number(t[0])) / Math.abs(Number(t[0]))]).toEqual([true, expect.toSatisfy((d: number) => d <= 1e-12)])
  })
}

const tmp = mkdtempSync(join(tmpdir(), 'coref-real-'))
for (const corpus of ['litbank', 'ontogum']) {
  const folder = `coref/${corpus}/conll`
  const self = golden.real[`${corpus}-self`]
  const perturbed = golden.real[`${corpus}-perturbed`]
  describeShared(folder)(`eval coref on ${corpus} against the official scorer`, () => {
    it.skipIf(!self)('gold against itself', () => {
      const ours = corefTable(evaluateCorefFiles(sharedPath(folder), sharedPath(folder))).replace(/\nCoNLL-2012 F1[^\n]*\n$/, '')
      expectSameTable(ours, scorerTable(self as Case))
    })
    it.skipIf(!perturbed)('gold against the perturbed copy', () => {
      const response = perturbedResponse(readConll(sharedPath(folder)), PERTURB_SEED)
      expect(createHash('md5').update(response).digest('hex')).toBe(perturbed?.md5)
      const file = join(tmp, `${corpus}.perturbed.conll`)
      writeFileSync(file, response)
      const ours = corefTable(evaluateCorefFiles(sharedPath(folder), file)).replace(/\nCoNLL-2012 F1[^\n]*\n$/, '')
      expectSameTable(ours, scorerTable(perturbed as Case))
    })
  })
}
