import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {EXAMPLE_A, EXAMPLE_B, VOCAB} from '../core/data/inspect-fixtures.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-inspect-cmd-'))
const vocabPath = join(dir, 'vocab.txt')
const vocabText = VOCAB.join('\n') + '\n'

/** The header `span mask` writes: vocabulary, special ids, and its flags in the history. */
const HEADER = {
  span: 'header',
  kind: 'masked',
  vocab: {path: vocabPath, sha256: createHash('sha256').update(vocabText).digest('hex'), size: VOCAB.length},
  cased: false,
  special: {pad: 0, unk: 1, cls: 2, sep: 3, mask: 4},
  history: [{stage: 'mask', version: '0.1.0', flags: {p: 0.2, maxSpan: 10, scheme: 'span'}}],
}

const ndjson = (...values: object[]) => values.map((v) => JSON.stringify(v) + '\n').join('')
const MASKED = ndjson(HEADER, EXAMPLE_A, EXAMPLE_B)

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function span(args: string[], input: string | Buffer = ''): Run {
  return runSpan(['inspect', ...args], {input, cwd: dir, timeout: 60_000})
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'commands', 'inspect.js'))) throw new Error('build first: npx tsc -p tsconfig.build.json')
  writeFileSync(vocabPath, vocabText)
})

describe('span inspect', () => {
  it('prints the readable report of a masked stream from stdin', () => {
    const r = span([], MASKED)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toContain('span inspect: stdin  masked examples of span mask (from the header)\n')
    expect(r.stdout).toContain('  mask ratio      69.23%  (9 targets / 13 non-special tokens)\n')
    expect(r.stdout).toContain('  span length     mean 1.75 words observed vs 3.80 theoretical')
    expect(r.stdout).toMatch(/\n {4}1 {2}observed █+ +50\.0% {2}\(2\)\n/)
    expect(r.stdout).not.toContain('\u001b[') // not a TTY: no colour
  })

  it('prints one JSON object with --json', () => {
    const r = span(['--json'], MASKED)
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout.trim().split('\n')).toHaveLength(1)
    const s = JSON.parse(r.stdout)
    expect([s.kind, s.records, s.tokens, s.masking.targets, s.masking.maskRatio]).toEqual(['masked', 2, 19, 9, 9 / 13])
    expect(s.masking.spanLength.rows.slice(0, 3).map((x: {observed: number}) => x.observed)).toEqual([2, 1, 1])
    expect(s.masking.spanLength).toMatchObject({unit: 'words', p: 0.2, maxSpan: 10, from: 'header'})
  })

  it('reads a file argument and finds a relative header vocabulary beside it', () => {
    const file = join(dir, 'rel.ndjson')
    writeFileSync(file, ndjson({...HEADER, vocab: {...HEADER.vocab, path: 'vocab.txt'}}, EXAMPLE_A))
    const r = runSpan(['inspect', '--json', file])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(JSON.parse(r.stdout).masking.spanLength.unit).toBe('words')
  })

  it('writes the SVG chart through a temporary name', () => {
    const svg = join(dir, 'out', '..', 'chart.svg')
    const r = span(['--svg', svg], MASKED)
    expect([r.code, r.stderr]).toEqual([0, ''])
    const text = readFileSync(svg, 'utf8')
    expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(text).toContain('<title>Span length in words: observed vs Geo(p = 0.2) clipped at 10</title>')
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('falls back to lengths in tokens without a vocabulary, and says so on stderr', () => {
    const r = span(['--json'], ndjson(EXAMPLE_A, EXAMPLE_B))
    expect(r.code).toBe(0)
    const s = JSON.parse(r.stdout)
    expect([s.kindFrom, s.masking.spanLength.unit, s.masking.maskRatio]).toEqual(['shape', 'tokens', null])
    expect(r.stderr).toContain('span inspect: no vocabulary (the stream has no header naming one; give --vocab FILE): span lengths are counted in tokens, not words\n')
    expect(r.stderr).toContain('span inspect: special-token ids unknown')
  })

  it('counts words of a headerless stream with --vocab, and takes p from the flags', () => {
    const r = span(['--json', '--vocab', vocabPath, '--p', '0.3', '--max-span', '5'], ndjson(EXAMPLE_A, EXAMPLE_B))
    expect([r.code, r.stderr]).toEqual([0, ''])
    const s = JSON.parse(r.stdout)
    expect(s.masking.maskRatio).toBe(9 / 13)
    expect(s.masking.spanLength).toMatchObject({unit: 'words', p: 0.3, maxSpan: 5, from: 'flags'})
    expect(s.masking.spanLength.rows.map((x: {length: string}) => x.length)).toEqual(['1', '2', '3', '4', '5', '>5'])
  })

  it('prints a zero summary for empty input and exits 0', () => {
    const r = span([], '')
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout).toBe('span inspect: stdin  (empty input)\n\nrecords           0\ntokens            0\ndocuments         — (no doc field)\n')
    expect(JSON.parse(span(['--json'], '').stdout)).toMatchObject({kind: null, records: 0, tokens: 0, masking: null})
  })
})

describe('span inspect on bad input', () => {
  it('names the line of invalid JSON', () => {
    const r = span([], ndjson(HEADER) + '{"ids": [2, 3\n')
    expect(r.code).not.toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^span inspect: stdin:2: invalid JSON: [^\n]+\n$/)
  })

  it('rejects a record of unknown shape', () => {
    const r = span([], '{"text": "hello"}\n')
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('span inspect: stdin:1: record of unknown shape (keys text); expected a token record {doc, ids}, a block {ids: [CLS … SEP]} or a masked example {ids, targets, spans}\n')
  })

  it('rejects binary garbage', () => {
    const r = span([], Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0xff, 0xfe]))
    expect(r.code).not.toBe(0)
    expect(r.stdout).toBe('')
    expect(r.stderr).toMatch(/^span inspect: stdin:[12]: (binary input \(NUL byte\); expected UTF-8 text|invalid JSON: [^\n]+)\n$/)
  })

  it('refuses an --svg path it cannot write, before reading the input', () => {
    const missing = span(['--svg', join(dir, 'no', 'such', 'dir', 'c.svg')], MASKED)
    expect(missing.code).not.toBe(0)
    expect(missing.stdout).toBe('')
    expect(missing.stderr).toBe(`span inspect: --svg ${join(dir, 'no', 'such', 'dir', 'c.svg')}: cannot write there (no such directory)\n`)
    const underFile = span(['--svg', join(vocabPath, 'c.svg')], MASKED)
    expect(underFile.code).not.toBe(0)
    expect(underFile.stderr).toBe(`span inspect: --svg ${join(vocabPath, 'c.svg')}: cannot write there (not a directory)\n`)
  })

  it('refuses --svg for a stream without spans', () => {
    const r = span(['--svg', join(dir, 'blocks.svg')], ndjson({...HEADER, kind: 'blocks', history: []}, {doc: 0, ids: [2, 5, 3]}))
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('span inspect: --svg: the span-length chart needs masked examples (from span mask), got blocks\n')
    expect(existsSync(join(dir, 'blocks.svg'))).toBe(false)
  })
})
