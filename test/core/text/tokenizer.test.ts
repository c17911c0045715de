import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {Kind, charTable, normalizeChar, reorderUncased} from '../../../src/core/text/chars.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {loadVocab, type Vocab} from '../../../src/core/text/vocab.js'
import {WordTable, wordPiece} from '../../../src/core/text/wordpiece.js'
import {VOCABS} from './tokenizer-oracle.js'
import {describeShared} from '../../helpers/shared-data.js'

const describeVocabs = describeShared('vocab/bert-base-cased.txt', 'vocab/bert-base-uncased.txt')

const dir = mkdtempSync(join(tmpdir(), 'span-tok-'))

/** A vocabulary file with the five special tokens first, then `tokens`. */
function vocabOf(tokens: string[], name = 'v.txt'): Vocab {
  const path = join(dir, name)
  writeFileSync(path, ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...tokens].join('\n') + '\n')
  return loadVocab(path)
}

// google-research/bert tokenization_test.py, test_wordpiece_tokenizer
const google = vocabOf(['want', '##want', '##ed', 'wa', 'un', 'runn', '##ing', ',', '!'], 'google.txt')

describeVocabs('WordPiece (greedy longest match first)', () => {
  const tok = new WordPieceTokenizer(google, {lowercase: true})

  it('splits into pieces with ## continuations, as the reference test does', () => {
    expect(tok.tokenize('')).toEqual([])
    expect(tok.tokenize('unwanted running')).toEqual(['un', '##want', '##ed', 'runn', '##ing'])
  })

  it('makes a whole word [UNK] when some part has no piece', () => {
    expect(tok.tokenize('unwantedX running')).toEqual(['[UNK]', 'runn', '##ing'])
    expect(tok.encode('xyz')).toEqual([google.special.unk])
  })

  it('takes the longest piece, not the first or the shortest', () => {
    const v = vocabOf(['a', 'ab', 'abc', '##d', '##cd', '##c'], 'longest.txt')
    const t = new WordPieceTokenizer(v, {lowercase: false})
    expect(t.tokenize('abcd')).toEqual(['abc', '##d'])
    expect(t.tokenize('abd')).toEqual(['ab', '##d'])
    expect(t.tokenize('acd')).toEqual(['a', '##cd'])
    expect(t.tokenize('abcc')).toEqual(['abc', '##c'])
  })

  it('maps words over 100 characters to [UNK], counting code points, after normalisation', () => {
    const v = vocabOf(['a', '##a', 'e', '##e', '😀', '##😀'], 'long.txt')
    const t = new WordPieceTokenizer(v, {lowercase: true})
    expect(t.tokenize('a'.repeat(100))).toEqual(['a', ...Array(99).fill('##a')])
    expect(t.tokenize('a'.repeat(101))).toEqual(['[UNK]'])
    expect(t.tokenize(`${'a'.repeat(101)} a`)).toEqual(['[UNK]', 'a'])
    expect(t.tokenize('😀'.repeat(100))).toHaveLength(100) // 200 UTF-16 units, 100 characters
    expect(t.tokenize('😀'.repeat(101))).toEqual(['[UNK]'])
    expect(t.tokenize('e\u0301'.repeat(60))).toHaveLength(60) // 120 before accents are stripped
    expect(new WordPieceTokenizer(v, {lowercase: false}).tokenize('e\u0301'.repeat(60))).toEqual(['[UNK]'])
  })

  it('treats text that looks like a special token as text (Google’s reference does)', () => {
    const t = new WordPieceTokenizer(loadVocab(VOCABS.uncased), {lowercase: true})
    expect(t.tokenize('[MASK]')).toEqual(['[', 'mask', ']'])
  })
})

describeVocabs('BasicTokenizer', () => {
  // tokenization_test.py test_basic_tokenizer_lower / _no_lower / test_chinese
  it('lowercases, strips accents and splits punctuation when uncased', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: true})
    expect(tok.basic(' \tHeLLo!how  \n Are yoU?  ')).toEqual(['hello', '!', 'how', 'are', 'you', '?'])
    expect(tok.basic('H\u00e9llo')).toEqual(['hello'])
  })

  it('keeps case and accents when cased', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: false})
    expect(tok.basic(' \tHeLLo!how  \n Are yoU?  ')).toEqual(['HeLLo', '!', 'how', 'Are', 'yoU', '?'])
    expect(tok.basic('H\u00e9llo')).toEqual(['H\u00e9llo'])
  })

  it('splits CJK ideographs into words of their own', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: true})
    expect(tok.basic('ah\u535a\u63a8zz')).toEqual(['ah', '\u535a', '\u63a8', 'zz'])
    expect(tok.basic('a\u{20000}b')).toEqual(['a', '\u{20000}', 'b'])
  })

  it('drops control and format characters inside a word without splitting it', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: false})
    expect(tok.basic('ab\u200bcd e\u0000f g\ufffdh i\u00adj')).toEqual(['abcd', 'ef', 'gh', 'ij'])
    expect(tok.basic('\u0001\u0002')).toEqual([])
    expect(tok.basic('a\u00a0b\u3000c\td')).toEqual(['a', 'b', 'c', 'd'])
  })

  it('counts ASCII symbols as punctuation, and Unicode P* but not S*', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: false})
    expect(tok.basic('a$b^c`d|e~f')).toEqual(['a', '$', 'b', '^', 'c', '`', 'd', '|', 'e', '~', 'f'])
    expect(tok.basic('x«y»z—w')).toEqual(['x', '«', 'y', '»', 'z', '—', 'w'])
    expect(tok.basic('x€y©z')).toEqual(['x€y©z'])
  })

  // Where Python's tokenization.py and the Hugging Face reference part ways, we follow HF:
  it('lowercases sigma per character, with no final form (HF; Python’s str.lower gives ς)', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: true})
    expect(tok.basic('ΟΔΟΣ')).toEqual(['οδοσ'])
  })

  it('strips the dot of Turkish İ when uncased (NFD, drop Mn, lowercase)', () => {
    const tok = new WordPieceTokenizer(google, {lowercase: true})
    expect(tok.basic('İstanbul ı')).toEqual(['istanbul', 'ı'])
  })

  it('agrees between strings and UTF-8 bytes, including lines that need the exact path', () => {
    const tok = new WordPieceTokenizer(loadVocab(VOCABS.cased), {lowercase: false})
    for (const line of ['plain ascii line.', 'Café 中文 😀 x\u0301', 'ﬁ ｆｕｌｌ', '']) {
      const bytes = Buffer.from(`>${line}<`)
      const n = tok.encodeBytes(bytes, 1, bytes.length - 1)
      expect(Array.from(tok.ids().subarray(0, n))).toEqual(tok.encode(line))
    }
  })
})

describe('character tables (from the reference, not Node’s Unicode data)', () => {
  it('classifies as the reference does where Node disagrees or is surprising', () => {
    const cased = charTable(false)
    expect(cased.kind[0x00ad]).toBe(Kind.Removed) // soft hyphen, Cf
    expect(cased.kind[0x0378]).toBe(Kind.Word) // unassigned: kept by the reference's clean_text
    expect(cased.kind[0x00a0]).toBe(Kind.Space)
    expect(cased.kind[0x0085]).toBe(Kind.Removed) // NEL is Cc: removed before it could split
    expect(cased.kind[0x0024]).toBe(Kind.Punct)
    expect(cased.kind[0x4e00]).toBe(Kind.Cjk)
  })

  it('normalises one code point at a time as BertNormalizer does', () => {
    expect(normalizeChar(0x00c5, true)).toBe('a') // Å
    expect(normalizeChar(0x00c5, false)).toBe('Å')
    expect(normalizeChar(0xac01, true)).toBe('\u1100\u1161\u11a8') // 각, Hangul NFD
    expect(normalizeChar(0xf900, true)).toBe(' \u8c48 ') // CJK compatibility ideograph, padded then NFD
    expect(normalizeChar(0x0301, true)).toBe('') // a combining accent alone
    expect(normalizeChar(0x0301, false)).toBe('\u0301')
    expect(normalizeChar(0xd800, false)).toBe('') // a lone surrogate reaches the reference as U+FFFD
  })
})

describe('canonical reordering of the marks strip_accents keeps (uncased)', () => {
  // U+1E944 (Adlam alif lengthener, class 230) and U+1E94A (Adlam nukta, class 7): the reference
  // does not count them as Mn, so they survive strip_accents, and NFD sorts a run of marks by class.
  const t = charTable(true)
  const hex = (s: string) => Array.from(s, (c) => (c.codePointAt(0) as number).toString(16)).join(' ')

  it('sorts a run of surviving marks by combining class', () => {
    expect(hex(reorderUncased(t, 'a\u{1e944}\u{1e94a}'))).toBe('61 1e94a 1e944')
    expect(hex(reorderUncased(t, 'a\u{1e94a}\u{1e944}'))).toBe('61 1e94a 1e944')
  })

  it('keeps the run going across dropped marks and removed characters, not across a starter', () => {
    expect(hex(reorderUncased(t, 'a\u{1e944}\u0301\u200b\u{1e94a}'))).toBe('61 1e94a 1e944')
    expect(hex(reorderUncased(t, 'a\u{1e944}b\u{1e94a}'))).toBe('61 1e944 62 1e94a')
    expect(hex(reorderUncased(t, 'a\u{1e944}\u0941\u{1e94a}'))).toBe('61 1e944 1e94a') // U+0941 is Mn of class 0: a starter
  })

  it('is what the scanner does with such a line, and nothing changes for cased text', () => {
    const uncased = new WordPieceTokenizer(google, {lowercase: true})
    expect(uncased.basic('A\u{1e944}\u{1e94a} x').map(hex)).toEqual(['61 1e94a 1e944', '78'])
    const cased = new WordPieceTokenizer(google, {lowercase: false})
    expect(cased.basic('A\u{1e944}\u{1e94a}').map(hex)).toEqual(['41 1e944 1e94a'])
  })
})

describe('WordTable and wordPiece', () => {
  const entries: [string, number][] = [['a', 1], ['ab', 2], ['##b', 3], ['中', 4], ['😀', 5], ['##', 6]]
  const units = (s: string) => {
    const u = new Uint16Array(s.length)
    for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i)
    return u
  }

  it('finds the longest vocabulary prefix of a word', () => {
    const table = new WordTable(entries)
    const out = new Int32Array(8)
    const word = (s: string) => {
      const n = wordPiece(table, units(s), 0, s.length, out, 0)
      return n < 0 ? null : Array.from(out.subarray(0, n))
    }
    expect(word('ab')).toEqual([2])
    expect(word('abb')).toEqual([2, 3])
    expect(word('ac')).toBeNull()
    expect(word('中')).toEqual([4])
    expect(word('😀')).toEqual([5])
    expect(word('😀b')).toEqual([5, 3])
    expect(word('😀c')).toBeNull()
    expect(word('##')).toEqual([6])
    expect(word('a#')).toBeNull() // ### is no entry
  })

  it('looks whole words up by hash', () => {
    const table = new WordTable(entries)
    const u = units
    expect(table.lookup(u('ab'), 0, 2)).toBe(2)
    expect(table.lookup(u('xab'), 1, 3)).toBe(2)
    expect(table.lookup(u('abc'), 0, 3)).toBe(-1)
    expect(table.lookup(u('😀'), 0, 2)).toBe(5)
    expect(table.lookup(u(''), 0, 0)).toBe(-1)
    expect(table.lookup(u('##b'), 0, 3)).toBe(3)
    expect(table.lookup(u('b'), 0, 1)).toBe(-1)
  })
})
