// Long raw-text lines in pieces (issue 13, item 5): a line cut where the BasicTokenizer cannot
// join across the cut gives, piece by piece, exactly the bytes the whole line gives, on text made
// to break it (cuts next to punctuation, CJK, combining accents, runs of spaces, NULs, malformed
// UTF-8, characters split across reads), cased and uncased, with and without "tokens".
import {Readable, Writable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {readLineBatches, type LineBatch} from '../../../src/core/stream/bytelines.js'
import type {Source} from '../../../src/core/stream/lines.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {longLines, safeCut} from '../../../src/core/text/long-line.js'
import {tokenizeText} from '../../../src/core/text/tokenize-stage.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {DEFAULT_VOCAB, loadVocab} from '../../../src/core/text/vocab.js'

const ALPHABET = [
  'a',
  'the',
  'Unaffable',
  'Zé',
  'É',
  'ﬁ',
  'İ',
  'ǅ',
  'ß',
  "don't",
  '3.14',
  ' ',
  '  ',
  '   ',
  '\t',
  '.',
  ',',
  '!',
  '(',
  ')',
  '-',
  '中',
  '国',
  '語',
  '\u3000',
  'e\u0301',
  '\u0301',
  '\u0308',
  '\u0323',
  '\u0345',
  'ạ\u0302',
  'a\u0327\u0301',
  '\u0000',
  '\u0000\u0000',
  '\ufffd',
  '\u200b',
  '\u00ad',
  '😀',
  '𠀀',
  '\u1100\u1161',
  '한국',
  'ا\u064b',
  'ก\u0e49',
  '\u0007',
  'x'.repeat(120),
  '\u00a0',
]

/** A deterministic adversarial line of about `bytes` bytes (LCG choices from ALPHABET). */
function line(bytes: number, seed: number): Buffer {
  const parts: Buffer[] = []
  let x = seed
  for (let n = 0; n < bytes;) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    const pick = (x >>> 8) % (ALPHABET.length + 1)
    const b = pick === ALPHABET.length ? Buffer.from([0xff]) : Buffer.from(ALPHABET[pick]) // malformed UTF-8 now and then
    parts.push(b)
    n += b.length
  }
  return Buffer.concat(parts)
}

function source(buf: Buffer, chunk: number): Source {
  const chunks: Buffer[] = []
  for (let i = 0; i < buf.length; i += chunk) chunks.push(buf.subarray(i, i + chunk))
  return {name: 'stdin', stream: Readable.from(chunks, {objectMode: false})}
}

async function tokenize(batches: AsyncIterable<LineBatch>, lowercase: boolean, tokens: boolean): Promise<string> {
  const tok = new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase})
  const parts: Buffer[] = []
  const sink = new Writable({
    write(chunk, _enc, cb) {
      parts.push(Buffer.from(chunk))
      cb()
    },
  })
  const w = new LineWriter(sink)
  await tokenizeText(batches, tok, w, {tokens, docStart: /^=/})
  await w.flush()
  return Buffer.concat(parts).toString()
}

describe('long lines tokenized in pieces', () => {
  const input = Buffer.concat([
    line(30_000, 1),
    Buffer.from('\n'),
    Buffer.from(' '.repeat(5000) + '\t'.repeat(300) + '\n\n'), // a long blank line: no record, ends the document
    line(20_000, 2),
    Buffer.from('\n' + '\u0000'.repeat(4000) + '\n'), // only NULs: a record with no ids
    Buffer.from('=' + 'x '.repeat(3000) + '\r\n'), // --doc-start in the first piece
    line(200, 3),
    Buffer.from('\n'),
    line(40_000, 4), // the last line without a newline
  ])
  for (const lowercase of [false, true]) {
    for (const tokens of [false, true]) {
      it(`${lowercase ? 'uncased' : 'cased'}${tokens ? ', with tokens' : ''}: byte-identical to whole lines`, async () => {
        const whole = await tokenize(readLineBatches(source(input, input.length), Infinity, 'text'), lowercase, tokens)
        let pieces = 0
        async function* counted(): AsyncGenerator<LineBatch> {
          for await (const b of readLineBatches(
            source(input, 7),
            Infinity,
            'text',
            longLines(new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase}).chars, 50),
          )) {
            if (b.piece) pieces++
            yield b
          }
        }
        const cut = await tokenize(counted(), lowercase, tokens)
        expect(pieces).toBeGreaterThan(1000)
        expect(cut.split('\n').length).toBe(7) // 5 records and the empty rest; the blank long line has none
        expect(cut).toBe(whole)
      })
    }
  }

  it('cuts only after a word ends and before a character of its own', () => {
    const t = new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase: true}).chars
    const at = (s: string) => safeCut(t, Buffer.from(s), Buffer.byteLength(s))
    expect(at('ab cd')).toBe(3)
    expect(at('ab.cd')).toBe(3)
    expect(at('ab \u0301cd')).toBe(-1) // a mark after the space: the cut would move it
    expect(at('abcd')).toBe(-1)
    expect(at('ab\u0000cd')).toBe(-1) // a dropped character does not end a word
    expect(at('中国')).toBe(3)
  })
})
