// The noun-phrase chunker as a user builds it (dist/ must be built): span finetune ner --tag-column chunk
// --tag-types NP on a CoNLL-2003-layout file (token POS chunk NER), then predict ner | eval ner on the chunk
// column, and tokenize | tag | block | mask --scheme noun-phrase as bin/run.js processes; bad columns are one line.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {BIN, runShell} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-chunker-'))
const span = `${process.execPath} ${BIN}`
const sh = (script: string) => runShell(script, {cwd: dir, timeout: 300_000})
const parse = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))

// word/chunk/ner: NP chunks (and VP, PP ones the chunker must not learn) beside the entities
const SENTENCES = [
  'Peter/B-NP/B-PER Blackburn/I-NP/I-PER visited/B-VP/O the/B-NP/O old/I-NP/O city/I-NP/O',
  'the/B-NP/O committee/I-NP/O met/B-VP/O in/B-PP/O London/B-NP/B-LOC',
  'German/B-NP/B-MISC farmers/I-NP/O sold/B-VP/O apples/B-NP/O to/B-PP/O a/B-NP/O man/I-NP/O',
  'a/B-NP/O man/I-NP/O from/B-PP/O Sydney/B-NP/B-LOC called/B-VP/O Reuters/B-NP/B-ORG',
]
const conll =
  '-DOCSTART- -X- -X- O\n\n' +
  SENTENCES.map((s) =>
    s
      .split(' ')
      .map((w) => w.split('/'))
      .map(([word, chunk, ner]) => `${word} NN ${chunk} ${ner}`)
      .join('\n'),
  ).join('\n\n') +
  '\n'
const text = SENTENCES.map((s) => s.replace(/\/\S+/g, '')).join('\n') + '\n'

beforeAll(() => {
  writeFileSync(join(dir, 'train.conll'), conll)
  writeFileSync(join(dir, 'text.txt'), text)
  const r = sh(
    `${span} finetune ner --preset tiny --train train.conll --dev train.conll --tag-column chunk --tag-types NP --epochs 30 --batch-size 4 --lr 2e-3 --max-len 16 --threads 1 --seed 3 --out np > metrics.ndjson`,
  )
  expect([r.code, r.stderr.split('\n').filter((l) => /error|Error/.test(l))]).toEqual([0, []])
}, 300_000)

describe('the noun-phrase chunker (finetune ner --tag-column chunk --tag-types NP)', () => {
  it('learns B-NP/I-NP only, saves the column with the run; predict ner | eval ner scores NP chunks as training did', () => {
    const saved = JSON.parse(readFileSync(join(dir, 'np', 'best', 'finetune_config.json'), 'utf8'))
    expect(saved).toMatchObject({'tag-column': 'chunk', 'tag-types': 'NP', labels: ['O', 'B-NP', 'I-NP'], scheme: 'iob2'})
    const dev = parse(readFileSync(join(dir, 'metrics.ndjson'), 'utf8')).filter((m) => m.split === 'dev')
    const pr = sh(`${span} predict ner --model np --data train.conll --threads 1 -o np.pred`)
    expect(pr.code).toBe(0)
    const ev = sh(`${span} eval ner --gold train.conll --pred np.pred --tag-column chunk --tag-types NP --json`)
    expect(ev.code).toBe(0)
    const s = JSON.parse(ev.stdout)
    expect(Object.keys(s.per_type)).toEqual(['NP'])
    expect(s.f1).toBeCloseTo(dev.at(-1).f1, 10) // the last checkpoint is best/ after 30 epochs of 4 sentences
    expect(s.f1).toBeGreaterThan(50) // it learned its 4 sentences
    // the same predictions scored against the NER column (the default): no NP chunk is an entity
    const ner = JSON.parse(sh(`${span} eval ner --gold train.conll --pred np.pred --json`).stdout)
    expect([ner.f1, Object.keys(ner.per_type).sort()]).toEqual([0, ['LOC', 'MISC', 'NP', 'ORG', 'PER']])
  }, 400_000)

  it('--resume keeps the column: the saved one is read again, another is refused', () => {
    const flags = '--tag-column chunk --tag-types NP --epochs 2 --batch-size 4 --lr 2e-3 --max-len 16 --threads 1'
    expect(sh(`${span} finetune ner --preset tiny --train train.conll ${flags} --stop-at 1 --out np2 > /dev/null`).code).toBe(0)
    const off = sh(`${span} finetune ner --resume np2 --tag-column ner --threads 1`)
    expect([off.code, off.stdout]).toEqual([2, ''])
    expect(off.stderr).toMatch(/^span finetune ner: --tag-column "ner" differs from the run in .*\("chunk"\); leave it out to continue the run as it was\n$/)
    const on = sh(`${span} finetune ner --resume np2 --threads 1 > /dev/null`)
    expect([on.code, on.stderr.split('\n').filter((l) => /error|Error/.test(l))]).toEqual([0, []])
    expect(JSON.parse(readFileSync(join(dir, 'np2', 'best', 'finetune_config.json'), 'utf8'))).toMatchObject({
      'tag-column': 'chunk',
      'tag-types': 'NP',
      labels: ['O', 'B-NP', 'I-NP'],
    })
  }, 400_000)

  it('tokenize | tag | block | mask --scheme noun-phrase: NP tags, and spans labelled NP or "random"', () => {
    const r = sh(
      `${span} tokenize --vocab np/best/vocab.txt text.txt | ${span} tag --model np --threads 1 | ${span} block --len 32 | ${span} mask --scheme noun-phrase --ratio 0.5 --seed 2`,
    )
    expect(r.code).toBe(0)
    const [h, ...recs] = parse(r.stdout)
    expect(h.history.map((e: {stage: string}) => e.stage)).toEqual(['tokenize', 'tag', 'block', 'mask'])
    const origins = new Set(recs.flatMap((x) => x.spans.map((s: unknown[]) => s[3])))
    expect(origins.has('NP')).toBe(true)
    expect([...origins].every((o) => o === 'NP' || o === 'random')).toBe(true)
  }, 400_000)

  it.each([
    ['a column past the lines', '--tag-column 5', 1, /^span finetune ner: .*train\.conll:3: no column 5 \(--tag-column\): the line has 4 columns\n$/],
    ['a column of non-tags', '--tag-column pos', 1, /^span finetune ner: .*train\.conll:3: not an IOB tag in column 2 \(pos\): "NN"/],
    ['the token column', '--tag-column 1', 2, /--tag-column must be ner, chunk, pos, last or a column number from 2 \(1 is the token\), got "1"/],
    [
      'a type the column lacks',
      '--tag-column chunk --tag-types ADJP',
      1,
      /^span finetune ner: .*train\.conll: no ADJP tags in column 3 \(chunk\) \(--tag-types ADJP\)\n$/,
    ],
  ])('refuses %s (%s) in one line, exit %i, no run directory', (_, flags, code, re) => {
    const r = sh(`${span} finetune ner --preset tiny --train train.conll ${flags} --threads 1 --out never`)
    expect([r.code, r.stdout]).toEqual([code, ''])
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(re)
    expect(existsSync(join(dir, 'never'))).toBe(false)
  })

  it('eval ner: --tag-column without --gold is a usage error; a gold file without the column is its error at the line', () => {
    const a = sh(`${span} eval ner --pred np.pred --tag-column chunk`)
    expect([a.code, a.stdout, a.stderr]).toEqual([2, '', 'span eval ner: --tag-column and --tag-types read the --gold file: give --gold\n'])
    writeFileSync(join(dir, 'two.conll'), 'EU I-ORG\nrejects O\n')
    const b = sh(`${span} eval ner --gold two.conll --pred two.conll --tag-column chunk`)
    expect([b.code, b.stdout]).toEqual([1, ''])
    expect(b.stderr).toMatch(/^span eval ner: .*two\.conll:1: no column 3 \(chunk\) \(--tag-column\): the line has 2 columns\n$/)
  })
})
