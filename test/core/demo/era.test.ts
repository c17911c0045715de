import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {documents, shuffled, tailLines, writeEraTask} from '../../../src/core/demo/era.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {DEFAULT_CORPUS, DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'
import {Rng} from '../../../src/core/util/rng.js'

const rows = (file: string) =>
  readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .slice(1)
    .map((l) => l.split('\t'))

describe('demo era task', () => {
  it('splits the corpus into its eleven addresses, one per era', () => {
    const docs = documents(readFileSync(DEFAULT_CORPUS, 'utf8'))
    expect(docs).toHaveLength(11)
    expect(docs[3][0]).toMatch(/^Fellow-Citizens of the Senate/) // 1862
    expect(docs.flat().every((l) => l.length > 0 && !l.includes('\t'))).toBe(true)
  })

  it('shuffles with its seed: same seed, same order; the input untouched', () => {
    const a = [1, 2, 3, 4, 5, 6, 7, 8]
    expect(shuffled(a, new Rng(3))).toEqual(shuffled(a, new Rng(3)))
    expect(shuffled(a, new Rng(3))).not.toEqual(a)
    expect([...shuffled(a, new Rng(3))].sort()).toEqual(a)
    expect(a).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
  })

  it('takes the last lines that fit in the held-out tokens', () => {
    const tok = new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase: false})
    const lines = ['the nation', 'the people of the nation', 'we']
    const n = (i: number) => tok.encode(lines[i]).length
    expect(tailLines(lines, n(2), tok)).toBe(1)
    expect(tailLines(lines, n(2) + n(1) - 1, tok)).toBe(1)
    expect(tailLines(lines, n(2) + n(1), tok)).toBe(2)
    expect(tailLines(lines, 1000, tok)).toBe(3)
  })

  it('writes a balanced dev set of sentences fine-tuning never sees, the train set balanced too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-era-'))
    const held = join(dir, 'eval.ndjson')
    writeFileSync(held, ['{"span":"header"}', ...Array.from({length: 20}, () => JSON.stringify({ids: Array(128).fill(5)}))].join('\n') + '\n')
    const out = {train: join(dir, 'train.tsv'), dev: join(dir, 'dev.tsv')}
    const perEra = await writeEraTask(DEFAULT_CORPUS, loadVocab(DEFAULT_VOCAB), held, out, 1)
    const [train, dev] = [rows(out.train), rows(out.dev)]
    expect(perEra).toBeGreaterThan(50)
    expect(dev.filter((r) => r[1] === '0')).toHaveLength(perEra)
    expect(dev.filter((r) => r[1] === '1')).toHaveLength(perEra)
    expect(train.filter((r) => r[1] === '0').length).toBe(train.filter((r) => r[1] === '1').length)
    const seen = new Set(train.map((r) => r[0]))
    expect(dev.filter((r) => seen.has(r[0]))).toEqual([])
    const docs = documents(readFileSync(DEFAULT_CORPUS, 'utf8'))
    const late = dev.filter((r) => r[1] === '1').map((r) => r[0])
    expect(late.at(-1)).toBe(docs[10].filter((l) => l !== 'Thank you.').at(-1)) // the end of 2016, pre-training's held-out text
    expect(late.every((l) => docs[10].slice(-perEra - 5).includes(l))).toBe(true)
    expect(dev.filter((r) => r[1] === '0').every((r) => docs[3].includes(r[0]))).toBe(true) // 1862
    expect(readFileSync(out.dev, 'utf8').split('\n')[0]).toBe('sentence\tlabel')
  })
})
