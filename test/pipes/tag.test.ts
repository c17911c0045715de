// span tag as a user runs it (dist/ must be built): a tiny token classifier trained here on a
// small CoNLL file, then tokenize | tag | block | mask --scheme entity as bin/run.js processes;
// the tags must be predict ner's word predictions mapped to sub-tokens; bad input is one line.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {chunks} from '../../src/core/tasks/ner/tag-records.js'
import {toIob2} from '../../src/core/tasks/ner/read.js'
import {BIN, runShell} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-tag-'))
const span = `${process.execPath} ${BIN}`
const sh = (script: string, input = '') => runShell(script, {cwd: dir, input, timeout: 300_000})
const parse = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))

// Plain words only (no inner punctuation), so tokenize's words are the CoNLL words.
const SENTENCES = [
  'Peter/B-PER Blackburn/I-PER visited/O London/B-LOC in/O May/O',
  'the/O committee/O of/O Toyota/B-ORG met/O Angela/B-PER Merkel/I-PER',
  'German/B-MISC farmers/O sold/O 1996/B-MISC apples/O to/O Paris/B-LOC',
  'a/O man/O from/O Sydney/B-LOC called/O Reuters/B-ORG',
]
const conll = (tags: boolean) =>
  SENTENCES.map((s) =>
    s
      .split(' ')
      .map((wt) => (tags ? wt.split('/').join(' X X ') : wt.split('/')[0] + ' X X'))
      .join('\n'),
  ).join('\n\n') + '\n'
const text =
  SENTENCES.map((s) =>
    s
      .split(' ')
      .map((wt) => wt.split('/')[0])
      .join(' '),
  ).join('\n') + '\n'

beforeAll(() => {
  writeFileSync(join(dir, 'train.conll'), conll(true).replace(/ X X /g, ' NN I-NP '))
  writeFileSync(join(dir, 'words.conll'), conll(false).replace(/ X X/g, ' NN I-NP'))
  writeFileSync(join(dir, 'text.txt'), text)
  const nli = JSON.stringify({premise: 'a man sleeps', hypothesis: 'a man is awake', label: 'contradiction'})
  writeFileSync(join(dir, 'n.jsonl'), `${nli}\n${nli}\n`)
  expect(sh(`${span} finetune nli --preset tiny --train n.jsonl --epochs 1 --max-len 16 --threads 1 --out nli > /dev/null`).code).toBe(0)
  const r = sh(
    `${span} finetune ner --preset tiny --train train.conll --epochs 30 --batch-size 4 --lr 2e-3 --max-len 16 --threads 1 --seed 3 --out ner > /dev/null`,
  )
  expect([r.code, r.stderr.split('\n').filter((l) => /error|Error/.test(l))]).toEqual([0, []])
}, 300_000)

describe('span tag', () => {
  it("tokenize | tag: each tag is a chunk of predict ner's word tags, first sub-token of its first word to the last of its last", () => {
    const r = sh(`${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model ner --keep-numeric --threads 1`)
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/^span tag: 4 records, \d+ tags\n$/)
    const [h, ...recs] = parse(r.stdout)
    expect(h.history.map((e: {stage: string}) => e.stage)).toEqual(['tokenize', 'tag'])
    const pred = sh(`${span} predict ner --model ner --data words.conll --threads 1 --scheme iob2`)
    const words = pred.stdout
      .trimEnd()
      .split('\n\n')
      .map((s) => s.split('\n').map((l) => l.split(' ').at(-1) as string))
    const vocab = readFileSync(join(dir, 'ner', 'best', 'vocab.txt'), 'utf8').split('\n')
    let total = 0
    recs.forEach((rec, k) => {
      const first = rec.ids.map((id: number, i: number) => (vocab[id].startsWith('##') ? -1 : i)).filter((i: number) => i >= 0)
      expect(first.length).toBe(words[k].length)
      const want = chunks(toIob2(words[k])).map(([a, b, l]) => [first[a], (b + 1 < first.length ? first[b + 1] : rec.ids.length) - 1, l])
      expect(rec.tags ?? []).toEqual(want)
      total += want.length
    })
    expect(total).toBeGreaterThan(3) // the model learned its 4 sentences well enough to tag something
  }, 400_000)

  it('tokenize | tag | block | mask --scheme entity: masked examples with labelled spans; --labels keeps a subset', () => {
    const r = sh(
      `${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model ner --threads 1 | ${span} block --len 32 | ${span} mask --scheme entity --ratio 0.5 --seed 2`,
    )
    expect(r.code).toBe(0)
    const [h, ...recs] = parse(r.stdout)
    expect(h.history.map((e: {stage: string}) => e.stage)).toEqual(['tokenize', 'tag', 'block', 'mask'])
    const origins = recs.flatMap((x) => x.spans.map((s: unknown[]) => s[3]))
    expect(origins.some((o: string) => o !== 'random')).toBe(true)
    const per = sh(`${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model ner --threads 1 --labels PER,LOC`)
    const labels = new Set(
      parse(per.stdout)
        .slice(1)
        .flatMap((x) => (x.tags ?? []).map((t: unknown[]) => t[2])),
    )
    expect([...labels].every((l) => l === 'PER' || l === 'LOC')).toBe(true)
  }, 400_000)

  it('numeric mentions ("1996", MISC in the training file) are dropped by default and kept with --keep-numeric', () => {
    const vocab = readFileSync(join(dir, 'ner', 'best', 'vocab.txt'), 'utf8').split('\n')
    const numeric = (x: {ids: number[]; tags?: number[][]}) =>
      (x.tags ?? []).filter((t) => x.ids.slice(t[0], t[1] + 1).every((id) => /^(##)?[0-9]+$/.test(vocab[id])))
    const tag = (extra: string) =>
      parse(sh(`${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model ner --threads 1 ${extra}`).stdout).slice(1)
    const kept = tag('--keep-numeric')
    const dropped = tag('')
    expect(kept.flatMap(numeric).length).toBeGreaterThan(0)
    expect(dropped.flatMap(numeric)).toEqual([])
    kept.forEach((x, i) => expect(dropped[i].tags ?? []).toEqual((x.tags ?? []).filter((t: number[]) => !numeric({ids: x.ids, tags: [t]}).length)))
  }, 400_000)

  it('bad input: another vocabulary, a model of another task, unknown --labels, bad tags: one line, non-zero exit, no output', () => {
    writeFileSync(join(dir, 'other.txt'), readFileSync(join(dir, 'ner', 'best', 'vocab.txt'), 'utf8') + 'zzzqx\n')
    const other = sh(`${span} tokenize --vocab other.txt text.txt | ${span} tag --model ner --threads 1`)
    expect([other.code, other.stdout]).toEqual([1, ''])
    expect(other.stderr).toMatch(/^span tag: stdin: tokenized with another vocabulary .* than ner's .*: tokenize with the model's vocab\.txt\n$/)
    const labels = sh(`${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model ner --labels PER,DATE --threads 1`)
    expect([labels.code, labels.stdout, labels.stderr]).toEqual([2, '', "span tag: --labels: DATE not among the model's labels (LOC, MISC, ORG, PER)\n"])
    const task = sh(`${span} tokenize --vocab ner/best/vocab.txt text.txt | ${span} tag --model nli --threads 1`)
    expect([task.code, task.stdout]).toEqual([1, ''])
    expect(task.stderr).toMatch(/^span tag: nli: a span finetune nli model, not a ner one/)
    const bad = sh(`${span} tag --model ner --threads 1`, '{"doc":0,"ids":[5,6],"tags":[[0,3,"PER"]]}\n')
    expect([bad.code, bad.stdout, bad.stderr]).toEqual([1, '', 'span tag: stdin:1: tags[0][1] = 3 is past the record (2 ids; ends are inclusive)\n'])
  }, 400_000)
})
