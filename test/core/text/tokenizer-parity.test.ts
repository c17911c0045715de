// Parity with the reference BERT tokenizer (Hugging Face `tokenizers`, see tokenizer-oracle.ts):
// every line of WikiText-2 valid and an adversarial set, with both of Google's BERT vocabularies,
// through both entry points (strings, and UTF-8 bytes as `span tokenize` reads them), plus every
// BMP code point and a sample of astral ones in context.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {REORDER, SURVIVORS} from '../../../src/core/text/tables/chars.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab} from '../../../src/core/text/vocab.js'
import {VOCABS, WIKITEXT_VALID, oracle, type Oracle} from './tokenizer-oracle.js'
import {describeShared, ifShared} from '../../helpers/shared-data.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'vocab/bert-base-uncased.txt', 'wikitext/wikitext-2.valid.txt')

const ADVERSARIAL = join(__dirname, '..', '..', 'fixtures-golden', 'tokenizer-adversarial.jsonl')
const adversarial: string[] = readFileSync(ADVERSARIAL, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l))
const wikiBytes = ifShared(['wikitext/wikitext-2.valid.txt'], () => readFileSync(WIKITEXT_VALID))

/** The lines of a buffer as byte ranges, framed like readLineBatches (no trailing empty line). */
function byteLines(buf: Buffer): [number, number][] {
  const out: [number, number][] = []
  for (let s = 0; s < buf.length; ) {
    const nl = buf.indexOf(10, s)
    const e = nl < 0 ? buf.length : nl
    out.push([s, e > s && buf[e - 1] === 13 ? e - 1 : e])
    s = e + 1
  }
  return out
}

/**
 * Lines where we differ from the reference: ids through encode() and encodeBytes(), and the
 * BasicTokenizer's words (basic(), which also shows differences hidden inside an [UNK]).
 */
function mismatches(tok: WordPieceTokenizer, ref: Oracle, lines: string[], expected: number[][]): string[] {
  const bad: string[] = []
  lines.forEach((line, i) => {
    const want = expected[i].join(',')
    const got = tok.encode(line).join(',')
    const bytes = Buffer.from(line)
    const n = tok.encodeBytes(bytes, 0, bytes.length)
    const viaBytes = n < 0 ? 'malformed' : Array.from(tok.ids().subarray(0, n)).join(',')
    if (got !== want || viaBytes !== want) bad.push(`${i} ${JSON.stringify(line.slice(0, 80))}: want ${want} got ${got} / bytes ${viaBytes}`)
    const words = ref.words(line)
    if (tok.basic(line).join('\u0001') !== words.join('\u0001')) bad.push(`${i} ${JSON.stringify(line.slice(0, 80))}: words differ`)
  })
  return bad
}

/** A deterministic mix of ASCII, BMP and astral code points (xorshift32, seeded). */
function randomLines(count: number, seed: number): string[] {
  let x = seed
  const rnd = () => {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    return (x >>> 0) / 2 ** 32
  }
  const pick = () => {
    const r = rnd()
    const c = r < 0.4 ? 0x20 + Math.floor(rnd() * 95) : r < 0.7 ? Math.floor(rnd() * 0x3000) : r < 0.85 ? Math.floor(rnd() * 0x10000) : Math.floor(rnd() * 0x110000)
    return c >= 0xd800 && c < 0xe000 ? 'x' : String.fromCodePoint(c)
  }
  return Array.from({length: count}, () => Array.from({length: 1 + Math.floor(rnd() * 40)}, pick).join(''))
}

/**
 * Runs of combining marks that strip_accents keeps (the reference's Mn data is older than its
 * NFD data), mixed with marks it drops, starters and code points whose NFD holds such a mark:
 * uncased, NFD's canonical reordering can swap them.
 */
function markLines(count: number): string[] {
  const every = (a: readonly (number | string)[]) => a.filter((_, i) => i % 2 === 0) as number[]
  const pools = [every(SURVIVORS), every(REORDER), [0x301, 0x316, 0x345, 0x941, 0x93c, 0x5b0], [0x61, 0xe9, 0x20, 0x2c, 0x200b, 0x4e00, 0x1e900]]
  let x = 12345
  const rnd = () => ((x = (Math.imul(x, 1103515245) + 12345) >>> 0) / 2 ** 32)
  const pick = (a: number[]) => a[Math.floor(rnd() * a.length)]
  return Array.from({length: count}, () => String.fromCodePoint(...Array.from({length: 1 + Math.floor(rnd() * 8)}, () => pick(pools[Math.floor(rnd() * pools.length)]))))
}

/** Every BMP code point (surrogates aside) and every 61st astral one, inside and around a word. */
function codePointLines(): string[] {
  const lines: string[] = []
  for (let c = 0; c < 0x110000; c += c < 0x10000 ? 1 : 61) {
    if (c >= 0xd800 && c < 0xe000) continue
    const ch = String.fromCodePoint(c)
    lines.push(`x${ch}ab ${ch}Q${ch}${ch} é${ch}`)
  }
  return lines
}

for (const mode of ['cased', 'uncased'] as const) {
  describe(`parity with the reference tokenizer, bert-base-${mode}`, () => {
    let ref: Oracle
    let tok: WordPieceTokenizer

    beforeAll(async () => {
      ref = await oracle(VOCABS[mode], mode === 'uncased')
      const vocab = loadVocab(VOCABS[mode])
      expect(vocab.cased).toBe(mode === 'cased') // the vocabulary says which mode it is
      tok = new WordPieceTokenizer(vocab, {lowercase: !vocab.cased})
    })

    it('agrees on every line of WikiText-2 valid, read as bytes', async () => {
      const ranges = byteLines(wikiBytes)
      const lines = ranges.map(([s, e]) => wikiBytes.toString('utf8', s, e))
      const expected = await ref.ids(lines)
      expect(lines.length).toBe(3760)
      expect(expected.reduce((n, ids) => n + ids.length, 0)).toBeGreaterThan(250_000)
      expect(mismatches(tok, ref, lines, expected)).toEqual([])
      const viaFile = ranges.map(([s, e]) => Array.from(tok.ids().subarray(0, tok.encodeBytes(wikiBytes, s, e))))
      expect(viaFile).toEqual(expected)
    })

    it('agrees on the adversarial set', async () => {
      expect(mismatches(tok, ref, adversarial, await ref.ids(adversarial))).toEqual([])
    })

    it('agrees on random code points', async () => {
      const lines = randomLines(20_000, mode === 'cased' ? 0x9e3779b9 : 0x85ebca6b)
      expect(mismatches(tok, ref, lines, await ref.ids(lines))).toEqual([])
    })

    it('agrees on every BMP code point and a sample of astral ones, in context', async () => {
      const lines = codePointLines()
      expect(mismatches(tok, ref, lines, await ref.ids(lines))).toEqual([])
    })

    it('agrees on runs of combining marks that canonical reordering can swap', async () => {
      const lines = markLines(5000)
      expect(mismatches(tok, ref, lines, await ref.ids(lines))).toEqual([])
    })

    it('agrees on malformed UTF-8, which decodes to U+FFFD (dropped)', async () => {
      const chunks = [[0x61, 0xff, 0x62], [0x63, 0xc3], [0xe2, 0x82, 0x61, 0x62], [0xed, 0xa0, 0x80, 0x7a], [0xf0, 0x9f, 0x98], [0xc0, 0xaf, 0x41], [0xf4, 0x90, 0x80, 0x80, 0x42]]
      for (const bytes of chunks.map((c) => Buffer.from(c))) {
        const text = bytes.toString('utf8')
        const [want] = await ref.ids([text])
        expect(tok.encodeBytes(bytes, 0, bytes.length)).toBe(-1) // the caller decodes these lines
        expect(tok.encode(text)).toEqual(want)
      }
    })
  })
}

describe('parity with the other vocabulary’s mode (flags override the vocabulary)', () => {
  it('cased vocabulary, uncased mode; uncased vocabulary, cased mode', async () => {
    for (const [path, lowercase] of [[VOCABS.cased, true], [VOCABS.uncased, false]] as const) {
      const ref = await oracle(path, lowercase)
      const tok = new WordPieceTokenizer(loadVocab(path), {lowercase})
      const lines = [...adversarial, ...wikiBytes.toString('utf8').split('\n').slice(0, 400)]
      expect(mismatches(tok, ref, lines, await ref.ids(lines))).toEqual([])
    }
  })
})
