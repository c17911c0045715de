// `span eval coref` in-process through oclif: the scorer's table and --json on the hand-built
// golden cases (fixtures/coref, tools/make-coref-goldens.ts), --split, and its errors (one line,
// exit 1 for bad data, 2 for a bad flag value).
import {runCommand} from '@oclif/test'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {describeShared, sharedPath} from '../helpers/shared-data.js'

const root = join(import.meta.dirname, '..', '..')
const CASES = join(root, 'fixtures', 'coref', 'cases')
const run = (args: string[]) => runCommand(['eval', 'coref', ...args], {root, ignoreManifest: true} as never)
const golden = JSON.parse(readFileSync(join(root, 'fixtures', 'coref', 'golden-scorer.json'), 'utf8')) as {
  cases: Record<string, Record<string, {stdout: string}>>
}
const scorerTable = (name: string) => ['muc', 'bcub', 'ceafm', 'ceafe', 'blanc'].map((m) => `\nMETRIC ${m}:\n${golden.cases[name]?.[m]?.stdout}`).join('')
const pair = (name: string) => ['--gold', join(CASES, `${name}.key.conll`), '--pred', join(CASES, `${name}.response.conll`)]

afterEach(() => {
  process.exitCode = undefined
})

describe('span eval coref (in-process)', () => {
  it("prints the official scorer's table, then the CoNLL F1", async () => {
    const {stdout, stderr, error} = await run(pair('split'))
    expect(error).toBeUndefined()
    expect(stderr).toBe('')
    const conll = /\nCoNLL-2012 F1 \(mean of MUC, B-cubed and CEAFe F1\): ([0-9.]+)%\n$/.exec(stdout)
    expect(stdout.slice(0, conll?.index)).toBe(scorerTable('split'))
    expect(conll?.[1]).toBe('88.32')
  })

  it('--json: percentages with numerators and denominators', async () => {
    const {stdout, error} = await run([...pair('spurious'), '--json'])
    expect(error).toBeUndefined()
    const j = JSON.parse(stdout)
    expect(Object.keys(j)).toEqual(['muc', 'bcub', 'ceafm', 'ceafe', 'blanc', 'mentions', 'conll_f1', 'documents', 'missing_documents'])
    expect(j.mentions).toMatchObject({recall_num: 9, recall_den: 9, precision_num: 9, precision_den: 12, recall: 100, precision: 75})
    expect(j.muc).toMatchObject({recall_num: 4, recall_den: 4, precision_den: 5})
    expect(j.conll_f1).toBeCloseTo((j.muc.f1 + j.bcub.f1 + j.ceafe.f1) / 3, 10)
  })

  it('says on stderr how many gold documents the predictions lack', async () => {
    const {stdout, stderr} = await run([...pair('missing-extra-doc'), '--json'])
    expect(stderr).toBe('span eval coref: 1 of 2 gold documents are not in the predictions (scored as empty), e.g. (e); part 0\n')
    expect(JSON.parse(stdout)).toMatchObject({documents: 2, missing_documents: 1})
  })

  it('refuses more than 10 repeated mentions, as the scorer does (exit 1)', async () => {
    const {stdout, stderr} = await run(pair('too-many-repeated'))
    expect(stdout).toBe('')
    expect(stderr).toMatch(/^span eval coref: \S*too-many-repeated\.response\.conll: 18 repeated mentions .*refuses more than 10\n$/)
    expect(process.exitCode).toBe(1)
  })

  it('names source:line for bad predictions (exit 1)', async () => {
    const {stdout, stderr} = await run(['--gold', join(CASES, 'merged.key.conll'), '--pred', join(CASES, 'ontogum.key.conll').replace('key', 'nope')])
    expect([stdout, stderr]).toEqual(['', `span eval coref: ${join(CASES, 'ontogum.nope.conll')}: file not found\n`])
    expect(process.exitCode).toBe(1)
    const bad = await run(['--gold', join(CASES, 'merged.key.conll'), '--pred', join(root, 'fixtures', 'coref', 'bad-close.conll')])
    expect(bad.stderr).toMatch(/^span eval coref: \S*bad-close\.conll:3: a mention of cluster 4 closes here \('4\)'\) but none of cluster 4 is open\n$/)
    expect(process.exitCode).toBe(1)
  })

  it('an empty folder or an unreadable file: one line, exit 1 (the bad-input matrix of issue 13)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'coref-empty-'))
    const a = await run(['--gold', join(CASES, 'merged.key.conll'), '--pred', empty])
    expect([a.stdout, a.stderr]).toEqual(['', `span eval coref: ${empty}: no .conll files in this folder\n`])
    expect(process.exitCode).toBe(1)
    process.exitCode = undefined
    const b = await run(['--gold', '/proc/self/mem', '--pred', join(CASES, 'merged.key.conll')])
    expect([b.stdout, b.stderr]).toEqual(['', 'span eval coref: /proc/self/mem: cannot read (EIO)\n'])
    expect(process.exitCode).toBe(1)
  })

  it('a split of a file is a usage error (exit 2)', async () => {
    const {stderr} = await run([...pair('merged'), '--split', 'dev'])
    expect(stderr).toMatch(/^span eval coref: a split selects files of a folder; \S+ is a file\n$/)
    expect(process.exitCode).toBe(2)
  })
})

describe('span eval compare --task coref (in-process)', () => {
  const compare = (args: string[]) => runCommand(['eval', 'compare', '--task', 'coref', ...args], {root, ignoreManifest: true} as never)
  const gold = join(CASES, 'random.key.conll')

  it('a paired randomization test over documents on the CoNLL F1', async () => {
    const {stdout, stderr} = await compare(['--gold', gold, '--a', gold, '--b', join(CASES, 'random.response.conll'), '--json'])
    expect(stderr).toBe('')
    const j = JSON.parse(stdout)
    expect(j).toMatchObject({task: 'coref', n: 3, unit: 'document', conll_f1_a: 100, test: 'randomization', trials: 10000, seed: 0})
    const evaluated = JSON.parse((await run(['--gold', gold, '--pred', join(CASES, 'random.response.conll'), '--json'])).stdout)
    expect(j.conll_f1_b).toBeCloseTo(evaluated.conll_f1, 10)
    // 3 documents, A perfect: only "swap none" and "swap all" of the 8 patterns reach the difference
    expect(j.p_value).toBeGreaterThan(0.23)
    expect(j.p_value).toBeLessThan(0.27)
  })

  it('says McNemar does not apply when --test asks for it (exit 2)', async () => {
    const {stderr} = await compare(['--gold', gold, '--a', gold, '--b', gold, '--test', 'exact'])
    expect(stderr).toMatch(/^span eval compare: --test picks a McNemar test, which does not apply to coref/)
    expect(process.exitCode).toBe(2)
  })
})

describeShared('coref/litbank', 'coref/ontogum')('span eval coref on the shared data (in-process)', () => {
  it('scores LitBank fold 0 dev (an id list) against the whole folder: 100 everywhere', async () => {
    const {stdout, stderr} = await run(['--gold', sharedPath('coref/litbank/tenfold_splits/0/dev.ids'), '--pred', sharedPath('coref/litbank/conll'), '--json'])
    expect(stderr).toBe('')
    const j = JSON.parse(stdout)
    expect(j.documents).toBe(10)
    for (const m of ['muc', 'bcub', 'ceafm', 'ceafe', 'blanc', 'mentions']) expect([m, j[m].f1]).toEqual([m, 100])
    expect(j.mentions.recall_den).toBe(3053)
  })

  it("takes OntoGUM's dev split from splits.md (its key repeats a span: the scorer's rule keeps it below 100)", async () => {
    const gold = sharedPath('coref/ontogum/conll')
    const {stdout} = await run(['--gold', gold, '--split', 'dev', '--pred', gold, '--json'])
    const j = JSON.parse(stdout)
    expect([j.documents, j.mentions.recall_den]).toEqual([30, 3817]) // 3,818 mentions, one span twice (GUM_bio_emperor): the scorer counts spans
    expect(j.muc.recall).toBeLessThan(100)
  })
})
