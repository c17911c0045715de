/**
 * The n-gram dictionary of Span Fine-tuning (Bao et al. §3.1, §4.1) and the segmentation it
 * gives: words are BERT BasicTokenizer words in uncased mode (lowercased, accents stripped);
 * n-grams have 2 ≤ n ≤ max-n words, none of them punctuation-only, and never cross a sentence
 * (line) end. A sentence is segmented greedily from the left, the longest dictionary n-gram
 * first, unmatched words alone (§3.1: "match n-grams from the head of each input sentence;
 * n-grams with greater lengths are prioritized, while unmatched tokens remain the same").
 *
 * Dictionary file (ours; the paper ships none): a header line
 *   #span-ngrams v1 max_n=5 min_count=10 max_size=none entries=N
 * then N lines `w1 w2 … wn<TAB>count`, sorted by count descending, then n-gram ascending.
 */
import {Pre, preClass} from './chars.js'
import {BasicScanner} from './basic.js'
import type {Rng} from '../util/rng.js'
import {errorAt} from '../stream/errors.js'
import {readLines, type Source} from '../stream/lines.js'
import {type DictLineReader, dictReaderFor} from './ngram-formats.js'

export const DICT_MAGIC = '#span-ngrams v1'

export interface DictMeta {
  maxN: number
  minCount: number
  maxSize: number | null
  entries: number
}

/** A segment of a word sequence: [start, end), end exclusive. */
export type Segment = [number, number]

/** True for a word made only of punctuation (BERT's _is_punctuation; after BasicTokenizer: one character). */
export function isPunctWord(w: string): boolean {
  if (w.length === 0) return false
  for (let i = 0; i < w.length; i++) {
    const cp = w.codePointAt(i) as number
    if (preClass(cp) !== Pre.Punct) return false
    if (cp > 0xffff) i++
  }
  return true
}

/** The dictionary's words of one sentence: uncased BasicTokenizer words, and which are punctuation. */
export class WordSplitter {
  private readonly scanner = new BasicScanner(true)

  words(text: string): string[] {
    return this.scanner.basic(text)
  }

  /** A WordPiece word (pieces joined, `##` dropped) normalised as the dictionary's words are. */
  normalise(word: string): string {
    return this.scanner.basic(word).join('')
  }
}

export function headerLine(meta: DictMeta): string {
  return `${DICT_MAGIC} max_n=${meta.maxN} min_count=${meta.minCount} max_size=${meta.maxSize ?? 'none'} entries=${meta.entries}`
}

/** Parses the header line; a wrong magic or a missing or bad field is an error at line 1. */
export function parseHeaderLine(text: string, source: string): DictMeta {
  const bad = (msg: string) => errorAt(source, 1, `not a span n-gram dictionary: ${msg}`)
  if (!text.startsWith(DICT_MAGIC + ' ') && text !== DICT_MAGIC) throw bad(`expected a first line starting "${DICT_MAGIC}", got ${JSON.stringify(text.slice(0, 60))}`)
  const kv = new Map(text.slice(DICT_MAGIC.length).trim().split(/\s+/).filter(Boolean).map((f) => f.split('=', 2) as [string, string]))
  const int = (key: string, min: number) => {
    const v = Number(kv.get(key))
    if (!kv.has(key) || !Number.isInteger(v) || v < min) throw bad(`header field ${key} must be an integer ≥ ${min}, got ${JSON.stringify(kv.get(key) ?? null)}`)
    return v
  }
  const size = kv.get('max_size')
  return {maxN: int('max_n', 2), minCount: int('min_count', 1), maxSize: size === undefined || size === 'none' ? null : int('max_size', 0), entries: int('entries', 0)}
}

/** The n-grams of a dictionary file, as a set of space-joined keys. */
export class NgramDict {
  constructor(readonly meta: DictMeta, readonly keys: Set<string>) {}

  /** Greedy longest-match-first segmentation of one sentence's words, from the left (§3.1). */
  segment(words: readonly string[], punct: readonly boolean[] = words.map(isPunctWord)): Segment[] {
    const out: Segment[] = []
    for (let i = 0; i < words.length; ) {
      const n = this.longestAt(words, punct, i)
      out.push([i, i + n])
      i += n
    }
    return out
  }

  /**
   * The segmentation Span Fine-tuning's reference code computes (BAORONGZHOU/span-fine-tuning
   * @bca4358, data_process/dense_sent_tokenization.py MultiTokenizer.tokenize): from the left, the
   * longest dictionary n-gram of n = max_n … 2 words, else one word; near the end the window
   * shrinks to n_words − 1 − i and stays shrunk, so an n-gram ending at the last word is found
   * only from the position where the full window first reaches the end (its behaviour, kept).
   */
  segmentAsReference(words: readonly string[]): Segment[] {
    const out: Segment[] = []
    let maxN = this.meta.maxN
    for (let i = 0; i < words.length; ) {
      if (i + maxN > words.length) maxN = words.length - 1 - i
      let n = 1
      for (let len = maxN; len >= 2; len--) {
        if (this.keys.has(words.slice(i, i + len).join(' '))) {
          n = len
          break
        }
      }
      out.push([i, i + n])
      i += n
    }
    return out
  }

  /** Length of the longest dictionary n-gram starting at word i, or 1. */
  private longestAt(words: readonly string[], punct: readonly boolean[], i: number): number {
    let room = 0 // words from i before the sentence end or a punctuation word
    while (room < this.meta.maxN && i + room < words.length && !punct[i + room]) room++
    for (let n = room; n >= 2; n--) if (this.keys.has(words.slice(i, i + n).join(' '))) return n
    return 1
  }
}

/**
 * Reads and checks a dictionary file. The first line tells the format: our header (then
 * `ngram\tcount` rows and the entry count checked), a JSON object (the reference's
 * `{ngram: count}`), or else plain `ngram\tcount` rows without a header (./ngram-formats.ts).
 */
export async function readNgramDict(src: Source): Promise<NgramDict> {
  let meta: DictMeta | null = null
  let other: DictLineReader | null = null
  const keys = new Set<string>()
  let rows = 0
  for await (const {text, no} of readLines(src)) {
    if (no === 1 && !text.startsWith('#span-ngrams')) other = dictReaderFor(text, src.name)
    if (other) {
      other.add(text, no)
      continue
    }
    if (meta === null) {
      meta = parseHeaderLine(text, src.name)
      continue
    }
    keys.add(parseRow(text, no, meta, src.name))
    rows++
  }
  if (other) {
    const c = other.result()
    return new NgramDict({maxN: c.maxN, minCount: c.minCount, maxSize: null, entries: c.keys.size}, c.keys)
  }
  if (meta === null) throw errorAt(src.name, 1, 'not a span n-gram dictionary: empty file')
  if (rows !== meta.entries) throw errorAt(src.name, rows + 1, `dictionary truncated or padded: the header says ${meta.entries} entries, the file has ${rows}`)
  return new NgramDict(meta, keys)
}

function parseRow(text: string, no: number, meta: DictMeta, source: string): string {
  const f = text.split('\t')
  if (f.length !== 2) throw errorAt(source, no, `expected "ngram<TAB>count", got ${f.length} tab-separated fields`)
  const count = Number(f[1])
  if (!/^\d+$/.test(f[1]) || count < meta.minCount) throw errorAt(source, no, `count must be an integer ≥ min_count ${meta.minCount}, got ${JSON.stringify(f[1])}`)
  const words = f[0].split(' ')
  if (words.length < 2 || words.length > meta.maxN || words.includes('')) {
    throw errorAt(source, no, `an n-gram must be 2 to ${meta.maxN} words separated by single spaces, got ${JSON.stringify(f[0])}`)
  }
  if (words.some(isPunctWord)) throw errorAt(source, no, `n-gram ${JSON.stringify(f[0])} contains a punctuation-only word`)
  return f[0]
}

/** Sentence-final punctuation: random segments may end with one but never run past it. */
const SENTENCE_END = new Set(['.', '!', '?'])

/**
 * The random segmentation of the ablation (§5.1 "Random SF", figure 4): from the left,
 * segments of a length drawn uniformly from 1..maxN, cut at the sentence's end.
 */
export function randomSegments(words: readonly string[], maxN: number, rng: Rng): Segment[] {
  const out: Segment[] = []
  for (let i = 0; i < words.length; ) {
    let end = Math.min(words.length, i + 1 + rng.int(maxN))
    for (let j = i; j < end - 1; j++) {
      if (SENTENCE_END.has(words[j])) {
        end = j + 1
        break
      }
    }
    out.push([i, end])
    i = end
  }
  return out
}

/**
 * Words of a WordPiece token sequence (a token starts a word unless it begins with `##`, docs/algorithms.md#tokenization)
 * and, per word, its first token.
 */
export function tokenWords(tokens: readonly string[], split: WordSplitter): {words: string[]; firstToken: number[]} {
  const words: string[] = []
  const firstToken: number[] = []
  let cur = ''
  for (let t = 0; t < tokens.length; t++) {
    const piece = tokens[t]
    if (t > 0 && piece.startsWith('##')) {
      cur += piece.slice(2)
      continue
    }
    if (t > 0) words.push(split.normalise(cur))
    firstToken.push(t)
    cur = piece
  }
  if (tokens.length > 0) words.push(split.normalise(cur))
  return {words, firstToken}
}

/** Word segments as token spans [first token, last token] (inclusive, as the masked records' spans). */
export function tokenSpans(segments: readonly Segment[], firstToken: readonly number[], tokenCount: number): [number, number][] {
  return segments.map(([s, e]) => [firstToken[s], e < firstToken.length ? firstToken[e] - 1 : tokenCount - 1])
}
