/**
 * NER sentences as token-classification inputs (BERT §4.3): each word's label sits on its first
 * WordPiece sub-token; the other sub-tokens, [CLS] and [SEP] carry -1 (ignored by the loss).
 * A sentence longer than max-len - 2 sub-tokens is cut into windows that move by `stride`
 * sub-tokens; each word is labelled (and later predicted) in the one window where it has the
 * most context on both sides (run_squad's _check_is_max_context rule).
 */
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import {docSpans, isMaxContext} from '../squad/features.js'

export interface NerFeature {
  sentence: number
  ids: Int32Array
  /** label per position, -1 where ignored */
  labels: Int32Array
  /** word index per position, -1 where no word's prediction is read */
  words: Int32Array
}

/** Sub-token ids of every word and the position of each word's first sub-token. */
function subTokens(words: string[], tok: WordPieceTokenizer): {ids: number[]; first: number[]} {
  const ids: number[] = []
  const first: number[] = []
  for (const w of words) {
    first.push(ids.length)
    const sub = tok.encode(w)
    ids.push(...(sub.length > 0 ? sub : [tok.vocab.special.unk]))
  }
  return {ids, first}
}

/** The windows of one sentence; `labels` (IOB2 label numbers per word) or null for prediction. */
export function nerFeatures(words: string[], labels: number[] | null, sentence: number, tok: WordPieceTokenizer, maxLen: number, stride: number): NerFeature[] {
  const {cls, sep} = tok.vocab.special
  const {ids, first} = subTokens(words, tok)
  const wordAt = new Map(first.map((p, w) => [p, w]))
  const spans = docSpans(ids.length, maxLen - 2, stride)
  return spans.map(({start, length}, w) => {
    const T = length + 2
    const f: NerFeature = {sentence, ids: new Int32Array(T), labels: new Int32Array(T).fill(-1), words: new Int32Array(T).fill(-1)}
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
