import {PassThrough, Readable, Writable} from 'node:stream'
import split2 from 'split2'
import {describe, expect, it} from 'vitest'
import {readLineBatches} from '../../../src/core/stream/bytelines.js'
import {readLines, type Source} from '../../../src/core/stream/lines.js'
import {readNdjson} from '../../../src/core/stream/ndjson.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {TokenRecordWriter} from '../../../src/core/text/token-records.js'
import {DocCounter, docStartPattern, tokenizeJsonl, tokenizeText} from '../../../src/core/text/tokenize-stage.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'
import {VOCABS} from './tokenizer-oracle.js'
import {describeShared} from '../../helpers/shared-data.js'

/** A source that delivers `chunks` as separate reads (to cut lines and characters apart). */
function source(chunks: (string | Buffer)[], name = 'stdin'): Source {
  return {name, stream: Readable.from(chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)), {objectMode: false})}
}

async function batchedLines(src: Source): Promise<string[]> {
  const out: string[] = []
  for await (const b of readLineBatches(src)) for (let i = 0; i < b.count; i++) out.push(b.buf.toString('utf8', b.start[i], b.end[i]))
  return out
}

/** The reference framing: split2 on /\r?\n/ (what readLines used before it framed bytes itself). */
async function split2Lines(chunks: (string | Buffer)[]): Promise<string[]> {
  const out: string[] = []
  for await (const l of source(chunks).stream.pipe(split2(/\r?\n/)) as AsyncIterable<string>) out.push(l)
  return out
}

describe('readLineBatches (and readLines) frame lines as split2 on /\\r?\\n/ does', () => {
  const cases: (string | Buffer)[][] = [
    ['a\nb\n'],
    ['a\nb'],
    ['\n\n\nx\n\n'],
    ['crlf\r\nline\r\n', 'lone\rcr\n'],
    ['split ac', 'ross chunks\nand a CR\r', '\nhere'],
    [Buffer.from('é中😀\n').subarray(0, 3), Buffer.from('é中😀\n').subarray(3, 7), Buffer.from('é中😀\n').subarray(7)],
    [''],
    ['no newline at all'],
    ['trailing cr\r'],
  ]
  for (const chunks of cases) {
    it(JSON.stringify(chunks.map(String)), async () => {
      const want = await split2Lines(chunks)
      expect(await batchedLines(source(chunks))).toEqual(want)
      const lines: string[] = []
      for await (const l of readLines(source(chunks))) lines.push(l.text)
      expect(lines).toEqual(want)
    })
  }

  it('reports a NUL byte with its line number, across chunks', async () => {
    await expect(batchedLines(source(['one\ntwo\nth', 'r\u0000ee\n']))).rejects.toThrow('stdin:3: binary input (NUL byte)')
    await expect(batchedLines(source(['ok\n', 'no newline \u0000']))).rejects.toThrow('stdin:2: binary input')
  })
})

describe('DocCounter', () => {
  const docs = (lines: string[], pattern?: string) => {
    const c = new DocCounter(docStartPattern(pattern))
    return lines.map((l) => c.next(l, l.trim() === ''))
  }

  it('starts at 0 and counts runs of blank lines between non-blank ones', () => {
    expect(docs(['', '', 'a', 'b', '', '', '', 'c', '', 'd', '', ''])).toEqual([-1, -1, 0, 0, -1, -1, -1, 1, -1, 2, -1, -1])
  })

  it('with --doc-start, starts documents at matching lines and ignores blank lines', () => {
    const lines = ['', ' = A = ', '', ' text', '', ' = = Sub = = ', ' more', ' = B = ', 'x']
    expect(docs(lines, '^ = [^=]')).toEqual([-1, 0, -1, 0, -1, 0, 0, 1, 1])
    expect(docs(['before', ' = A = ', 'x'], '^ = [^=]')).toEqual([0, 1, 1])
  })

  it('rejects an invalid pattern with a one-line error', () => {
    expect(() => docStartPattern('(')).toThrow(/^--doc-start: /)
  })
})

describe('TokenRecordWriter', () => {
  const text = (w: TokenRecordWriter) => Buffer.from(w.take()).toString('utf8')

  it('writes exactly what JSON.stringify writes', () => {
    const w = new TokenRecordWriter(30522, null)
    const recs = [[0, []], [0, [0]], [7, [101, 30521, 9, 10, 99, 100, 1000, 10000]], [123456, [5]]] as const
    for (const [doc, ids] of recs) w.add(doc, Int32Array.from(ids), ids.length)
    expect(text(w)).toBe(recs.map(([doc, ids]) => JSON.stringify({doc, ids}) + '\n').join(''))
  })

  it('writes ids of seven digits and more (a vocabulary of over a million entries)', () => {
    const w = new TokenRecordWriter(1_000_001, null)
    w.add(3, Int32Array.from([1_000_000, 0, 999_999]), 3)
    expect(text(w)).toBe('{"doc":3,"ids":[1000000,0,999999]}\n')
  })

  it('adds the token strings, escaped as JSON', () => {
    const tokens = ['[PAD]', '"', '\\', 'é', '##x', '\u0001']
    const w = new TokenRecordWriter(tokens.length, tokens)
    w.add(2, Int32Array.from([1, 2, 3, 4, 5]), 5)
    expect(text(w)).toBe(JSON.stringify({doc: 2, ids: [1, 2, 3, 4, 5], tokens: ['"', '\\', 'é', '##x', '\u0001']}) + '\n')
  })

  it('grows for a record larger than a chunk and keeps earlier records', () => {
    const w = new TokenRecordWriter(100000, null)
    const big = Int32Array.from({length: 50000}, (_, i) => 99999 - (i % 7))
    w.add(0, Int32Array.from([1]), 1)
    w.add(1, big, big.length)
    expect(text(w)).toBe(JSON.stringify({doc: 0, ids: [1]}) + '\n' + JSON.stringify({doc: 1, ids: Array.from(big)}) + '\n')
  })
})

/** Runs a tokenize stage into memory; returns the parsed records. */
async function collect(run: (w: LineWriter) => Promise<void>): Promise<Record<string, unknown>[]> {
  const parts: Buffer[] = []
  const sink = new Writable({write: (chunk, _enc, cb) => (parts.push(chunk), cb())})
  const w = new LineWriter(sink)
  await run(w)
  await w.end()
  const out = Buffer.concat(parts).toString('utf8')
  return out === '' ? [] : out.trimEnd().split('\n').map((l) => JSON.parse(l))
}

describeShared('vocab/bert-base-cased.txt')('tokenize stages', () => {
  const tok = new WordPieceTokenizer(loadVocab(VOCABS.cased), {lowercase: false})

  it('raw text: a record per non-blank line, ids [] for a line of control chars', async () => {
    const input = ['Hello, world!\n', '\u00a0\n', 'Second doc\r\n', '\u0001\n', '\n', 'third']
    const recs = await collect((w) => tokenizeText(readLineBatches(source(input)), tok, w, {tokens: true, docStart: null}))
    expect(recs).toEqual([
      {doc: 0, ids: tok.encode('Hello, world!'), tokens: ['Hello', ',', 'world', '!']},
      {doc: 1, ids: tok.encode('Second doc'), tokens: tok.tokenize('Second doc')},
      {doc: 1, ids: [], tokens: []},
      {doc: 2, ids: tok.encode('third'), tokens: ['third']},
    ])
  })

  it('raw text with a malformed UTF-8 line goes through the decoder (U+FFFD, dropped)', async () => {
    const recs = await collect((w) => tokenizeText(readLineBatches(source([Buffer.from([0x61, 0xff, 0x62, 0x0a])])), tok, w, {tokens: false, docStart: null}))
    expect(recs).toEqual([{doc: 0, ids: tok.encode('ab')}])
  })

  it('JSONL: record k is document k, its text split into lines', async () => {
    const input = ['{"text":"one\\n\\ntwo"}\n', '{"text":""}\n', '\n', '{"text":"three\\r\\nfour","x":1}\n']
    const recs = await collect((w) => tokenizeJsonl(readNdjson(source(input)), 'stdin', 'text', tok, w, {tokens: false}))
    expect(recs.map((r) => [r.doc, r.ids])).toEqual([[0, tok.encode('one')], [0, tok.encode('two')], [2, tok.encode('three')], [2, tok.encode('four')]])
  })

  it('JSONL: a missing or non-string field, or invalid JSON, is an error at its line', async () => {
    const run = (text: string) => collect((w) => tokenizeJsonl(readNdjson(source([text], 'in.jsonl')), 'in.jsonl', 'text', tok, w, {tokens: false}))
    await expect(run('{"text":"ok"}\n{"body":"x"}\n')).rejects.toThrow('in.jsonl:2: missing field "text"')
    await expect(run('{"text":3}\n')).rejects.toThrow('in.jsonl:1: field "text" must be a string, got a number')
    await expect(run('{"text":null}\n')).rejects.toThrow('in.jsonl:1: field "text" must be a string, got null')
    await expect(run('{"text":"a"}\n{"text":\n')).rejects.toThrow(/^in\.jsonl:2: invalid JSON/)
  })

  it('keeps memory flat: output leaves in chunks while input streams', async () => {
    const input = new PassThrough()
    const line = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(20) + '\n')
    let written = 0
    const sink = new Writable({write: (chunk, _enc, cb) => ((written += chunk.length), cb())})
    const w = new LineWriter(sink)
    const done = tokenizeText(readLineBatches({name: 'stdin', stream: input}), tok, w, {tokens: false, docStart: null})
    for (let i = 0; i < 2000; i++) if (!input.write(line)) await new Promise((r) => input.once('drain', r))
    expect(written).toBeGreaterThan(0) // records were written before the input ended
    input.end()
    await done
    await w.end()
    expect(written).toBeGreaterThan(2000 * 200)
  })
})
