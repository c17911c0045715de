/**
 * A CoNLL-2012 document as the coreference model reads it (Joshi et al. 2019; mandarjoshi90/coref
 * @bd04f2e1, minimize.py get_document / split_into_segments): every word as WordPiece sub-tokens,
 * the sub-tokens cut into independent `[CLS] … [SEP]` segments of at most max-segment-len tokens,
 * each cut at the last sentence end that fits, else (a sentence longer than a segment) at the last
 * word end that fits; OntoGUM, which has no sentence breaks, gets them from punctuation
 * (./sentences.ts). Mentions become [first, last] sub-token spans over the document's sub-tokens without [CLS]/[SEP] (docs/algorithms.md#coreference).
 */
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import {sentenceIds} from './sentences.js'
import {pushAll} from '../../util/arrays.js'

/** What the model needs of a document (tasks/coref/conll.ts ConllDoc has these fields). */
export interface CorefText {
  key: string
  words: string[]
  /** sentence index per word */
  sentence: number[]
  speaker?: (string | null)[]
  genre?: string
  /** [firstWord, lastWord] inclusive */
  clusters: [number, number][][]
}

/** A document in sub-tokens; arrays indexed by sub-token run over the document without [CLS]/[SEP]. */
export interface CorefDoc {
  key: string
  /** the segments' token ids, each [CLS] … [SEP] */
  segments: Int32Array[]
  /** first sub-token of each segment */
  segStart: number[]
  wordOf: Int32Array // [N]
  sentenceOf: Int32Array // [N]
  segmentOf: Int32Array // [N]
  /** 1 where a sub-token starts / ends a word */
  wordStart: Uint8Array // [N]
  wordEnd: Uint8Array // [N]
  /** speaker id per sub-token (0: none given) */
  speakerOf: Int32Array // [N]
  /** the genre's index in the run's genre list + 1 (0: none) */
  genre: number
  /** gold clusters as [first, last] sub-tokens */
  clusters: [number, number][][]
}

/**
 * Sub-tokens of every word ([UNK] for a word WordPiece leaves empty; a word longer than a segment
 * keeps its first `cap` sub-tokens) and each word's first sub-token (and the total, last).
 */
function subTokens(words: string[], tok: WordPieceTokenizer, cap: number): {ids: number[]; first: number[]} {
  const ids: number[] = []
  const first: number[] = []
  for (const w of words) {
    first.push(ids.length)
    const sub = tok.encode(w)
    pushAll(ids, sub.length > 0 ? sub.slice(0, cap) : [tok.vocab.special.unk])
  }
  first.push(ids.length)
  return {ids, first}
}

/**
 * minimize.py split_into_segments: from `current`, the last sub-token ≤ current + len − 3 where a
 * sentence ends (constraint 1), else where a word ends (constraint 2); returns each segment's first sub-token.
 */
export function splitSegments(n: number, maxSegmentLen: number, sentenceEnd: Uint8Array, wordEnd: Uint8Array): number[] {
  const starts: number[] = []
  let current = 0
  while (current < n) {
    const limit = Math.min(current + maxSegmentLen - 3, n - 1)
    let end = limit
    while (end >= current && !sentenceEnd[end]) end--
    if (end < current) {
      end = limit
      while (end >= current && !wordEnd[end]) end--
      if (end < current) throw new Error(`a word longer than ${maxSegmentLen - 2} sub-tokens`) // featurise caps words
    }
    starts.push(current)
    current = end + 1
  }
  return starts
}

/** Per-sub-token maps of a document's words: word, sentence, word starts/ends, sentence ends. */
function subTokenMaps(d: CorefText, first: number[], n: number) {
  const wordOf = new Int32Array(n)
  const sentenceOf = new Int32Array(n)
  const wordStart = new Uint8Array(n)
  const wordEnd = new Uint8Array(n)
  const sentenceEnd = new Uint8Array(n)
  const sentence = sentenceIds(d.words, d.sentence) // OntoGUM: from punctuation
  d.words.forEach((_, w) => {
    wordOf.fill(w, first[w], first[w + 1])
    sentenceOf.fill(sentence[w] ?? 0, first[w], first[w + 1])
    wordStart[first[w]] = 1
    wordEnd[first[w + 1] - 1] = 1
    if (w + 1 === d.words.length || sentence[w + 1] !== sentence[w]) sentenceEnd[first[w + 1] - 1] = 1
  })
  return {wordOf, sentenceOf, wordStart, wordEnd, sentenceEnd}
}

/** Speaker ids per sub-token (1, 2, … in order of appearance; 0 where the data has none). */
function speakerIds(d: CorefText, wordOf: Int32Array): Int32Array {
  const ids = new Map<string, number>()
  const out = new Int32Array(wordOf.length)
  if (!d.speaker) return out
  wordOf.forEach((w, i) => {
    const s = d.speaker?.[w]
    if (s === null || s === undefined || s === '' || s === '-') return
    if (!ids.has(s)) ids.set(s, ids.size + 1)
    out[i] = ids.get(s) as number
  })
  return out
}

/** A document's sub-tokens, segments and gold clusters in sub-tokens (docs/algorithms.md#coreference). */
export function featurise(d: CorefText, tok: WordPieceTokenizer, maxSegmentLen: number, genres: readonly string[]): CorefDoc {
  const {cls, sep} = tok.vocab.special
  const sub = subTokens(d.words, tok, maxSegmentLen - 2)
  const ids = sub.ids
  const n = ids.length
  const m = subTokenMaps(d, sub.first, n)
  const segStart = splitSegments(n, maxSegmentLen, m.sentenceEnd, m.wordEnd)
  const segmentOf = new Int32Array(n)
  const segments = segStart.map((s, k) => {
    const e = k + 1 < segStart.length ? segStart[k + 1] : n
    segmentOf.fill(k, s, e)
    return Int32Array.from([cls, ...ids.slice(s, e), sep])
  })
  const clusters = d.clusters.map((c) => c.map(([a, b]): [number, number] => [sub.first[a], sub.first[b + 1] - 1]))
  const genre = d.genre === undefined ? 0 : genres.indexOf(d.genre) + 1
  const {wordOf, sentenceOf, wordStart, wordEnd} = m
  return {key: d.key, segments, segStart, wordOf, sentenceOf, segmentOf, wordStart, wordEnd, speakerOf: speakerIds(d, wordOf), genre, clusters}
}
