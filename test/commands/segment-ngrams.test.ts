// `span segment-ngrams` as a spawned process (build first: npm run build), stdout and stderr apart.
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'span-segment-ngrams-'))

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

function span(args: string[], input = ''): Run {
  return runSpan(args, {input, cwd: dir, timeout: 60_000})
}

const CORPUS = 'New York City is big.\nI love New York City and new york.\n\nThe New York Times, New York.\n'
const DICT = '#span-ngrams v1 max_n=5 min_count=2 max_size=none entries=3\nnew york\t5\nnew york city\t2\nyork city\t2\n'

beforeAll(() => {
  const manifest = join(ROOT, 'oclif.manifest.json')
  const built = existsSync(join(ROOT, 'dist', 'commands', 'segment-ngrams.js')) && (!existsSync(manifest) || readFileSync(manifest, 'utf8').includes('"segment-ngrams"'))
  if (!built) throw new Error('build first: npm run build')
  writeFileSync(join(dir, 'corpus.txt'), CORPUS)
  writeFileSync(join(dir, 'ngrams.tsv'), DICT)
})

describe('span segment-ngrams --build', () => {
  it('writes the dictionary on stdout and a summary on stderr', () => {
    const r = span(['segment-ngrams', '--build', '--min-count', '2', 'corpus.txt'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(DICT)
    expect(r.stderr).toBe('span segment-ngrams: 3 sentences, 39 n-grams counted, 3 kept (count ≥ 2)\n')
  })

  it('reads stdin, JSONL with --field (lines inside a field are sentences), and writes -o whole', () => {
    const jsonl = CORPUS.split('\n').filter(Boolean).map((text) => JSON.stringify({id: 1, body: text})).join('\n') + '\n'
    const r = span(['segment-ngrams', '--build', '--min-count', '2', '--field', 'body', '-o', 'dict.tsv', '--tmp-dir', dir], jsonl)
    expect([r.code, r.stdout]).toEqual([0, ''])
    expect(readFileSync(join(dir, 'dict.tsv'), 'utf8')).toBe(DICT)
    const joined = JSON.stringify({body: 'new york\ncity new\nyork'}) + '\n'
    const j = span(['segment-ngrams', '--build', '--min-count', '1', '--field', 'body'], joined)
    // "york city" and a second "new york" would cross line ends
    expect(j.stdout).toBe('#span-ngrams v1 max_n=5 min_count=1 max_size=none entries=2\ncity new\t1\nnew york\t1\n')
    expect(readdirSync(dir).filter((f) => f.startsWith('span-ngrams-'))).toEqual([]) // run directory removed
  })

  it('--max-size keeps the most frequent', () => {
    const r = span(['segment-ngrams', '--build', '--min-count', '2', '--max-size', '2', 'corpus.txt'])
    expect(r.stdout).toBe('#span-ngrams v1 max_n=5 min_count=2 max_size=2 entries=2\nnew york\t5\nnew york city\t2\n')
  })

  it('bad JSONL is a one-line error and no output file appears', () => {
    const r = span(['segment-ngrams', '--build', '--field', 'body', '-o', 'never.tsv'], '{"body":"a b"}\n{"body":3}\n')
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toBe('span segment-ngrams: stdin:2: field "body" must be a string, got 3\n')
    expect(existsSync(join(dir, 'never.tsv'))).toBe(false)
  })
})

describe('span segment-ngrams --dict / --random', () => {
  it('segments text lines: words and [start, end) segments, blank lines skipped', () => {
    const r = span(['segment-ngrams', '--dict', 'ngrams.tsv', 'corpus.txt'])
    expect([r.code, r.stderr]).toEqual([0, ''])
    expect(r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))).toEqual([
      {text: 'New York City is big.', words: ['new', 'york', 'city', 'is', 'big', '.'], segments: [[0, 3], [3, 4], [4, 5], [5, 6]]},
      {text: 'I love New York City and new york.', words: ['i', 'love', 'new', 'york', 'city', 'and', 'new', 'york', '.'], segments: [[0, 1], [1, 2], [2, 5], [5, 6], [6, 8], [8, 9]]},
      {text: 'The New York Times, New York.', words: ['the', 'new', 'york', 'times', ',', 'new', 'york', '.'], segments: [[0, 1], [1, 3], [3, 4], [4, 5], [5, 7], [7, 8]]},
    ])
  })

  it('adds token spans to token records and passes the header on', () => {
    const header = {span: 'header', kind: 'tokens', vocab: null, cased: false, special: {pad: 0, unk: 1, cls: 2, sep: 3, mask: 4}, history: [{stage: 'tokenize', version: '0.1.0', flags: {}}]}
    const rec = {doc: 0, ids: [9, 10, 11, 12, 13], tokens: ['new', 'y', '##ork', 'city', '!']}
    const r = span(['segment-ngrams', '--dict', 'ngrams.tsv'], `${JSON.stringify(header)}\n${JSON.stringify(rec)}\n`)
    expect([r.code, r.stderr]).toEqual([0, ''])
    const [h, out] = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l))
    expect(h.history[1]).toEqual({stage: 'segment-ngrams', version: '0.1.0', flags: {dict: 'ngrams.tsv', random: false, maxN: 5, seed: null}})
    expect(out).toEqual({...rec, spans: [[0, 3], [4, 4]]})
  })

  it('token records without tokens are a one-line error', () => {
    const r = span(['segment-ngrams', '--dict', 'ngrams.tsv'], '{"span":"header","kind":"tokens","history":[]}\n{"doc":0,"ids":[1]}\n')
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toBe('span segment-ngrams: stdin:2: a token record needs "tokens", an array of strings (span tokenize --tokens)\n')
  })

  it('--random is reproducible from --seed', () => {
    const a = span(['segment-ngrams', '--random', '--seed', '4', 'corpus.txt'])
    const b = span(['segment-ngrams', '--random', '--seed', '4', 'corpus.txt'])
    expect([a.code, a.stderr]).toEqual([0, ''])
    expect(a.stdout).toBe(b.stdout)
    const segs = a.stdout.trimEnd().split('\n').map((l) => JSON.parse(l).segments as number[][])
    expect(segs.flat().length).toBeGreaterThan(0)
    for (const s of segs.flat(1)) expect(s[1] - s[0]).toBeLessThanOrEqual(5)
  })

  it('a bad dictionary file is named with its line', () => {
    writeFileSync(join(dir, 'bad.tsv'), '#span-ngrams v1 max_n=5 min_count=2 entries=1\nnew york ,\t3\n')
    const r = span(['segment-ngrams', '--dict', 'bad.tsv', 'corpus.txt'])
    expect([r.code, r.stdout]).toEqual([1, ''])
    expect(r.stderr).toBe('span segment-ngrams: bad.tsv:2: n-gram "new york ," contains a punctuation-only word\n')
    const none = span(['segment-ngrams', 'corpus.txt'])
    expect([none.code, none.stderr]).toEqual([
      2,
      'span segment-ngrams: give one of --build (count n-grams and write the dictionary), --dict FILE (segment with it) or --random (random segmentation)\n',
    ]) // a usage error (issue 25 cause 9)
  })

  it('segments a line of 400,000 words (3.2 MB: a spread of its words overflowed the call stack)', () => {
    const line = Array.from({length: 400_000}, (_, i) => `word${i % 1000}`).join(' ') + '\n'
    writeFileSync(join(dir, 'long.txt'), line)
    for (const mode of [['--random'], ['--dict', 'ngrams.tsv']]) {
      const r = span(['segment-ngrams', ...mode, 'long.txt', '-o', 'long.out'])
      expect(r.stderr).not.toMatch(/RangeError/)
      expect(r.code).toBe(0)
      expect(JSON.parse(readFileSync(join(dir, 'long.out'), 'utf8')).words).toHaveLength(400_000)
    }
  })
})
