import {mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Readable, Writable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {openSource, type Line} from '../../../src/core/stream/lines.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {FAN_IN, NgramCounter, topK, type CountOptions} from '../../../src/core/text/ngrams-count.js'
import {countNgrams, segmentText, writeDictionary} from '../../../src/core/text/ngrams-stream.js'
import {NgramDict, WordSplitter, isPunctWord, randomSegments, readNgramDict, tokenSpans, tokenWords} from '../../../src/core/text/ngrams.js'
import {fromArray} from '../../../src/core/text/ngrams-runs.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-ngrams-'))
const split = new WordSplitter()

function dict(maxN: number, ...ngrams: string[]): NgramDict {
  return new NgramDict({maxN, minCount: 1, maxSize: null, entries: ngrams.length}, new Set(ngrams))
}

async function* linesOf(text: string): AsyncGenerator<Line> {
  let no = 0
  for (const t of text.split('\n')) yield {text: t, no: ++no}
}

/** Builds a dictionary from `text` with the core API; returns the file text and the counter. */
async function build(text: string, opts: Partial<CountOptions> = {}): Promise<{out: string; counter: NgramCounter}> {
  const runDir = mkdtempSync(join(tmp, 'runs-'))
  const counter = new NgramCounter({maxN: 5, minCount: 10, maxSize: null, memoryBytes: 1 << 30, tmpDir: runDir, ...opts})
  const chunks: string[] = []
  const sink = new Writable({write: (c, _e, cb) => (chunks.push(String(c)), cb())})
  const w = new LineWriter(sink)
  await countNgrams(linesOf(text), 'corpus', undefined, counter, split)
  await writeDictionary(counter, w)
  await w.end()
  await counter.cleanup()
  expect(readdirSync(runDir)).toEqual([]) // run files removed
  return {out: chunks.join(''), counter}
}

describe('greedy longest-match-first segmentation (§3.1)', () => {
  it('takes the longest n-gram at the left first, unmatched words alone', () => {
    const d = dict(5, 'a b', 'a b c', 'b c d e', 'c d')
    // "b c d e" would cover more, but matching starts at the head: "a b c" wins, then d, e alone
    expect(d.segment(['a', 'b', 'c', 'd', 'e'])).toEqual([[0, 3], [3, 4], [4, 5]])
    expect(d.segment(['x', 'b', 'c', 'd', 'e', 'y'])).toEqual([[0, 1], [1, 5], [5, 6]])
    expect(d.segment(['x', 'c', 'd', 'c', 'd', 'c'])).toEqual([[0, 1], [1, 3], [3, 5], [5, 6]])
    expect(d.segment([])).toEqual([])
  })

  it('never matches beyond max_n words', () => {
    const d = dict(2, 'a b', 'a b c')
    expect(d.segment(['a', 'b', 'c'])).toEqual([[0, 2], [2, 3]])
  })

  it('never matches across a sentence (line) end or a punctuation word', () => {
    const d = dict(5, 'b c', 'new york')
    expect(segmentText('a b\nc d', split, (w) => d.segment(w))).toEqual({words: ['a', 'b', 'c', 'd'], segments: [[0, 1], [1, 2], [2, 3], [3, 4]]})
    expect(segmentText('a b c', split, (w) => d.segment(w)).segments).toEqual([[0, 1], [1, 3]])
    expect(d.segment(['b', '.', 'c'])).toEqual([[0, 1], [1, 2], [2, 3]])
    expect(segmentText('New York, new York.', split, (w) => d.segment(w))).toEqual({words: ['new', 'york', ',', 'new', 'york', '.'], segments: [[0, 2], [2, 3], [3, 5], [5, 6]]})
  })

  it('punctuation-only words are BERT punctuation', () => {
    expect(['.', ',', '@', '$', '<', '«', '—', '...'].map(isPunctWord)).toEqual([true, true, true, true, true, true, true, true])
    expect(['a', 'a.', '', '1', 'unk'].map(isPunctWord)).toEqual([false, false, false, false, false])
  })
})

describe('token spans from WordPiece tokens', () => {
  it('a token starts a word unless it begins with ##; segments map to inclusive token ranges', () => {
    const {words, firstToken} = tokenWords(['New', 'y', '##ork', 'city', 'is', 'un', '##believ', '##able', '.'], split)
    expect(words).toEqual(['new', 'york', 'city', 'is', 'unbelievable', '.'])
    expect(firstToken).toEqual([0, 1, 3, 4, 5, 8])
    const segs = dict(5, 'new york city').segment(words)
    expect(segs).toEqual([[0, 3], [3, 4], [4, 5], [5, 6]])
    expect(tokenSpans(segs, firstToken, 9)).toEqual([[0, 3], [4, 4], [5, 7], [8, 8]])
    expect(tokenWords([], split)).toEqual({words: [], firstToken: []})
  })
})

describe('random segmentation (§5.1 ablation)', () => {
  const words = 'a b c d e f . g h i j k l m n o p'.split(' ')

  it('covers the sentence with segments of 1..max_n words, never past a sentence end', () => {
    const segs = randomSegments(words, 3, new Rng(7))
    expect(segs[0][0]).toBe(0)
    expect(segs[segs.length - 1][1]).toBe(words.length)
    for (let i = 0; i < segs.length; i++) {
      const [s, e] = segs[i]
      expect(e - s).toBeGreaterThanOrEqual(1)
      expect(e - s).toBeLessThanOrEqual(3)
      if (i > 0) expect(s).toBe(segs[i - 1][1])
      expect(words.slice(s, e - 1)).not.toContain('.') // '.' only ever ends a segment
    }
  })

  it('is reproducible from the seed and varies with it', () => {
    expect(randomSegments(words, 5, new Rng(1))).toEqual(randomSegments(words, 5, new Rng(1)))
    const lens = new Set<number>()
    const rng = new Rng(2)
    for (let t = 0; t < 50; t++) for (const [s, e] of randomSegments(['a', 'b', 'c', 'd', 'e', 'f', 'g'], 5, rng)) lens.add(e - s)
    expect([...lens].sort()).toEqual([1, 2, 3, 4, 5])
  })
})

// Hand-counted (max_n 3): L1 gives the cat, the cat sat, cat sat, cat sat on, sat on, sat on the,
// on the, on the mat, the mat; L2 the cat, the cat sat, cat sat; L3 on the, on the mat, the mat,
// the cat; L4/L5 none (every n-gram holds ","). Crossing L2→L3 would make "sat on" 2.
const CORPUS = 'the cat sat on the mat .\nthe cat sat\non the mat , the cat\nyes , no\nyes , no\n'
const EXPECTED = ['#span-ngrams v1 max_n=3 min_count=2 max_size=none entries=6', 'the cat\t3', 'cat sat\t2', 'on the\t2', 'on the mat\t2', 'the cat sat\t2', 'the mat\t2', ''].join('\n')

describe('dictionary build', () => {
  it('counts exactly on a hand-built corpus: no punctuation n-grams, none across lines', async () => {
    const {out, counter} = await build(CORPUS, {maxN: 3, minCount: 2})
    expect(out).toBe(EXPECTED)
    expect([counter.sentences, counter.occurrences, counter.spills]).toEqual([5, 16, 0])
  })

  it('max_n 5 adds only singletons here; --max-size keeps the most frequent, ties by n-gram', async () => {
    expect((await build(CORPUS, {maxN: 5, minCount: 2})).out).toBe(EXPECTED.replace('max_n=3', 'max_n=5'))
    const {out} = await build(CORPUS, {maxN: 3, minCount: 2, maxSize: 3})
    expect(out).toBe('#span-ngrams v1 max_n=3 min_count=2 max_size=3 entries=3\nthe cat\t3\ncat sat\t2\non the\t2\n')
  })

  it('spilling sorted runs (more than the merge fan-in) gives the identical dictionary', async () => {
    const text = randomCorpus(300, 11)
    const inMemory = await build(text, {maxN: 4, minCount: 3})
    const spilled = await build(text, {maxN: 4, minCount: 3, memoryBytes: 1}) // a run per line, and per kept n-gram
    expect(spilled.counter.spills).toBeGreaterThan(FAN_IN) // intermediate merges while counting
    expect(spilled.counter.orderSpills).toBeGreaterThan(FAN_IN) // and while ordering by count
    expect([inMemory.counter.spills, inMemory.counter.orderSpills]).toEqual([0, 0])
    expect(spilled.out).toBe(inMemory.out)
    expect(inMemory.out).toBe(naiveDictionary(text, 4, 3))
  })

  it('topK keeps the first k in (count desc, n-gram asc) order', async () => {
    const entries: [string, number][] = [['b b', 5], ['a a', 5], ['c c', 9], ['d d', 1], ['e e', 5]]
    expect(await topK(fromArray(entries), 3)).toEqual([['c c', 9], ['a a', 5], ['b b', 5]])
    expect(await topK(fromArray(entries), 0)).toEqual([])
  })
})

/** Sentences over a small vocabulary with punctuation, reproducible from the seed. */
function randomCorpus(lines: number, seed: number): string {
  const vocab = ['the', 'a', 'cat', 'dog', 'sat', 'ran', 'on', 'mat', ',', '.', 'Über', 'über']
  const rng = new Rng(seed)
  const out: string[] = []
  for (let i = 0; i < lines; i++) {
    const n = 1 + rng.int(12)
    out.push(Array.from({length: n}, () => vocab[rng.int(vocab.length)]).join(' '))
  }
  return out.join('\n') + '\n'
}

/** The dictionary by brute force: every n-gram of every line, counted in one Map. */
function naiveDictionary(text: string, maxN: number, minCount: number): string {
  const counts = new Map<string, number>()
  for (const line of text.split('\n')) {
    const w = split.words(line)
    for (let i = 0; i < w.length; i++) {
      for (let n = 2; n <= maxN && i + n <= w.length; n++) {
        const g = w.slice(i, i + n)
        if (g.some(isPunctWord)) break
        counts.set(g.join(' '), (counts.get(g.join(' ')) ?? 0) + 1)
      }
    }
  }
  const kept = [...counts].filter(([, c]) => c >= minCount).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
  return [`#span-ngrams v1 max_n=${maxN} min_count=${minCount} max_size=none entries=${kept.length}`, ...kept.map(([k, c]) => `${k}\t${c}`), ''].join('\n')
}

describe('dictionary files', () => {
  async function load(text: string) {
    const path = join(tmp, `d${Math.random().toString(36).slice(2)}.tsv`)
    writeFileSync(path, text)
    return {path, dict: () => readNgramDict({name: path, stream: Readable.from([text])})}
  }

  it('reads what the build writes', async () => {
    const {path} = await load(EXPECTED)
    const d = await readNgramDict(await openSource(path))
    expect(d.meta).toEqual({maxN: 3, minCount: 2, maxSize: null, entries: 6})
    expect([...d.keys]).toEqual(['the cat', 'cat sat', 'on the', 'on the mat', 'the cat sat', 'the mat'])
  })

  it("reads the reference's JSON {ngram: count} (the last line kept) and headerless ngram<TAB>count lines, max_n 5", async () => {
    const json = await load('{"old": 1}\n{"new york": 12, "the new york times": 11, "a": 3}\n')
    const j = await json.dict()
    expect([...j.keys].sort()).toEqual(['a', 'new york', 'the new york times'])
    expect(j.meta).toEqual({maxN: 5, minCount: 3, maxSize: null, entries: 3})
    const plain = await load('new york\t12\n\nthe new york times\t11\n')
    const p = await plain.dict()
    expect([...p.keys]).toEqual(['new york', 'the new york times'])
    expect(p.meta).toEqual({maxN: 5, minCount: 11, maxSize: null, entries: 2})
    expect(p.segmentAsReference('i saw the new york times today'.split(' '))).toEqual([[0, 1], [1, 2], [2, 6], [6, 7]])
  })

  it('rejects bad JSON and plain dictionary lines with source:line', async () => {
    const cases: [string, string][] = [
      ['{"new york": 12}\n{"x": \n', ':2: not a JSON n-gram dictionary line: '],
      ['{"new york": "many"}\n', ':1: count of "new york" must be a number ≥ 0, got "many"'],
      ['{"new  york": 2}\n', ':1: an n-gram must be words separated by single spaces, got "new  york"'],
      ['{"new york": 2}\n[1]\n', ':2: a JSON n-gram dictionary line must be an object'],
      ['new york\t12\nthe times 11\n', ':2: expected "ngram<TAB>count" (or a "#span-ngrams v1" header, or a JSON object), got 1 tab-separated field'],
      ['new york\t12\nthe times\t-1\n', ':2: count must be an integer ≥ 0, got "-1"'],
    ]
    for (const [text, msg] of cases) {
      const {path, dict} = await load(text)
      await expect(dict(), JSON.stringify(text)).rejects.toThrow(path + msg)
    }
  })

  it('rejects a file of the wrong format with source:line', async () => {
    const cases: [string, string][] = [
      ['#span-ngrams v2 max_n=3\nthe cat\t3\n', ':1: not a span n-gram dictionary: expected a first line starting "#span-ngrams v1", got "#span-ngrams v2 max_n=3"'],
      ['#span-ngrams v1 max_n=3 min_count=2\nthe cat\t3\n', ':1: not a span n-gram dictionary: header field entries must be an integer ≥ 0, got null'],
      ['#span-ngrams v1 max_n=1 min_count=2 entries=0\n', ':1: not a span n-gram dictionary: header field max_n must be an integer ≥ 2, got "1"'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\nthe cat 3\n', ':2: expected "ngram<TAB>count", got 1 tab-separated fields'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\nthe cat\t1\n', ':2: count must be an integer ≥ min_count 2, got "1"'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\nthe cat\tx\n', ':2: count must be an integer ≥ min_count 2, got "x"'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\ncat\t5\n', ':2: an n-gram must be 2 to 3 words separated by single spaces, got "cat"'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\na b c d\t5\n', ':2: an n-gram must be 2 to 3 words separated by single spaces, got "a b c d"'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=1\nnew york ,\t5\n', ':2: n-gram "new york ," contains a punctuation-only word'],
      ['#span-ngrams v1 max_n=3 min_count=2 entries=3\nthe cat\t3\ncat sat\t2\n', ':3: dictionary truncated or padded: the header says 3 entries, the file has 2'],
      ['', ':1: not a span n-gram dictionary: empty file'],
    ]
    for (const [text, msg] of cases) {
      const {path, dict} = await load(text)
      await expect(dict(), JSON.stringify(text)).rejects.toThrow(path + msg)
    }
  })
})
