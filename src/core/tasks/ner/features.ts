/**
 * NER sentences as token-classification inputs (BERT §4.3): each word's label sits on its first
 * WordPiece sub-token; the other sub-tokens, [CLS] and [SEP] carry -1 (ignored by the loss).
 * A sentence longer than max-len - 2 sub-tokens is cut into windows that move by `stride`
 * sub-tokens; each word is labelled (and later predicted) in the one window where it has the
 * most context on both sides (run_squad's _check_is_max_context rule).
 * For Span Fine-tuning (§5.4) a window also carries its spans: [CLS], the sentence's segments
 * (at most r − 3, as the reference's MultiTokenizer.tokenize keeps max_chunk_number − 3 chunks)
 * cut to the window, and [SEP], each a one-token span as data_processor.py
 * NERProcessor.convert_examples_2_features lays them (BAORONGZHOU/span-fine-tuning @bca4358).
 */
import type {TokenSpan} from '../../model/span-index.js'
import type {Segment} from '../../text/ngrams.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import {docSpans, isMaxContext} from '../squad/features.js'
import {pushAll} from '../../util/arrays.js'

export interface NerFeature {
  sentence: number
  ids: Int32Array
  /** label per position, -1 where ignored */
  labels: Int32Array
  /** word index per position, -1 where no word's prediction is read */
  words: Int32Array
  /** Span Fine-tuning's spans, [first, last] positions of the window (empty without) */
  spans: TokenSpan[]
}

/** The word segments of a sentence for Span Fine-tuning, and r (max spans). */
export interface NerSegments {
  segments: Segment[]
  r: number
}

/** Sub-token ids of every word and the position of each word's first sub-token. */
function subTokens(words: string[], tok: WordPieceTokenizer): {ids: number[]; first: number[]} {
  const ids: number[] = []
  const first: number[] = []
  for (const w of words) {
    first.push(ids.length)
    const sub = tok.encode(w)
    pushAll(ids, sub.length > 0 ? sub : [tok.vocab.special.unk])
  }
  return {ids, first}
}

/** The windows of one sentence; `labels` (IOB2 label numbers per word) or null for prediction. */
export function nerFeatures(
  words: string[],
  labels: number[] | null,
  sentence: number,
  tok: WordPieceTokenizer,
  maxLen: number,
  stride: number,
  seg: NerSegments | null = null,
): NerFeature[] {
  const {ids, first} = subTokens(words, tok)
  return nerWindows(ids, first, labels, sentence, tok.vocab.special, maxLen, stride, seg)
}

/**
 * The windows over a sentence's sub-token `ids`, `first[w]` the position of word w's first
 * sub-token: what nerFeatures builds after WordPiece, and what `span tag` builds from a record's
 * ids (tasks/ner/tag-records.ts), so both read each word's prediction at the same place.
 */
export function nerWindows(
  ids: ArrayLike<number>,
  first: number[],
  labels: number[] | null,
  sentence: number,
  special: {cls: number; sep: number},
  maxLen: number,
  stride: number,
  seg: NerSegments | null = null,
): NerFeature[] {
  const {cls, sep} = special
  const wordAt = new Map(first.map((p, w) => [p, w]))
  const spans = docSpans(ids.length, maxLen - 2, stride)
  return spans.map(({start, length}, w) => {
    const T = length + 2
    const f: NerFeature = {sentence, ids: new Int32Array(T), labels: new Int32Array(T).fill(-1), words: new Int32Array(T).fill(-1), spans: []}
    if (seg) f.spans = windowSpans(seg, first, ids.length, start, length)
    f.ids[0] = cls
    f.ids[T - 1] = sep
    for (let i = 0; i < length; i++) {
      f.ids[i + 1] = ids[start + i]
      const word = wordAt.get(start + i)
      if (word === undefined || !isMaxContext(spans, w, start + i)) continue
      f.words[i + 1] = word
      if (labels) f.labels[i + 1] = labels[word]
    }
    return f
  })
}

/** [CLS], the sentence's segments (sub-token ranges, at most r − 3) inside the window [start, start + length), [SEP]. */
function windowSpans(seg: NerSegments, first: number[], n: number, start: number, length: number): TokenSpan[] {
  const out: TokenSpan[] = [[0, 0]]
  for (const [s, e] of seg.segments.slice(0, Math.max(0, seg.r - 3))) {
    const a = Math.max(first[s], start)
    const b = Math.min(e < first.length ? first[e] - 1 : n - 1, start + length - 1)
    if (a <= b) out.push([a - start + 1, b - start + 1])
  }
  out.push([length + 1, length + 1])
  return out
}
