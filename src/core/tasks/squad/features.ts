/**
 * run_squad's convert_examples_to_features: WordPiece sub-tokens of each doc word
 * (tok_to_orig_index, orig_to_tok_index), the answer's token span (_improve_answer_span),
 * sliding windows `[CLS] question [SEP] passage-window [SEP]` and token_is_max_context
 * (_check_is_max_context), with start/end labels (0 = [CLS]) for training.
 */
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {SquadExample} from './dataset.js'
import {answerWords, type SquadDoc} from './doc.js'

export interface WindowOptions {
  /** max_seq_length: [CLS] question [SEP] window [SEP] (384) */
  maxLen: number
  /** doc_stride: how far the window moves (128) */
  docStride: number
  /** max_query_length: question tokens kept (64) */
  maxQueryLen: number
}

export const DEFAULT_WINDOWS: WindowOptions = {maxLen: 384, docStride: 128, maxQueryLen: 64}

/** A passage split into words and their WordPiece sub-tokens. */
export interface TokenizedDoc extends SquadDoc {
  /** all_doc_tokens and their ids */
  subTokens: string[]
  subIds: number[]
  /** tok_to_orig_index: the word of each sub-token */
  tokToOrig: number[]
  /** orig_to_tok_index: each word's first sub-token (the next word's when it has none) */
  origToTok: number[]
}

/** One window of one question: the model's input and what decoding needs to map it back. */
export interface SquadFeature {
  exampleIndex: number
  qid: string
  /** doc_span_index */
  window: number
  tokens: string[]
  ids: number[]
  segments: number[]
  /** where the window starts in the passage's sub-tokens (doc_span.start) */
  docStart: number
  /** position of the window's first passage token: question tokens + 2 */
  docOffset: number
  /** token_to_orig_map: the doc word of each position, −1 outside the passage */
  tokenToOrig: number[]
  /** token_is_max_context: this window is the passage token's best context */
  maxContext: boolean[]
  /** training labels: the answer's positions, or 0 and 0 ([CLS]); 0 when built without labels */
  start: number
  end: number
}

/** Sub-tokenizes the doc words (the loop at the top of convert_examples_to_features). */
export function tokenizeDoc(doc: SquadDoc, tokenizer: WordPieceTokenizer): TokenizedDoc {
  const t: TokenizedDoc = {...doc, subTokens: [], subIds: [], tokToOrig: [], origToTok: []}
  doc.words.forEach((word, i) => {
    t.origToTok.push(t.subTokens.length)
    for (const id of tokenizer.encode(word)) {
      t.tokToOrig.push(i)
      t.subIds.push(id)
      t.subTokens.push(tokenizer.vocab.tokens[id])
    }
  })
  return t
}

/** _improve_answer_span: the smallest sub-token span whose text is the tokenized answer. */
export function improveAnswerSpan(subTokens: string[], start: number, end: number, tokenizer: WordPieceTokenizer, answerText: string): [number, number] {
  const tokAnswer = tokenizer.tokenize(answerText).join(' ')
  for (let s = start; s <= end; s++) {
    for (let e = end; e >= s; e--) {
      if (subTokens.slice(s, e + 1).join(' ') === tokAnswer) return [s, e]
    }
  }
  return [start, end]
}

/** The answer's sub-token span in the passage: tok_start_position, tok_end_position. */
export function answerTokenSpan(doc: TokenizedDoc, ex: SquadExample, tokenizer: WordPieceTokenizer): [number, number] | null {
  const words = ex.answers.length > 0 ? answerWords(doc, ex.answers[0]) : null
  if (!words) return null
  const start = doc.origToTok[words.first]
  const end = words.last < doc.words.length - 1 ? doc.origToTok[words.last + 1] - 1 : doc.subTokens.length - 1
  return improveAnswerSpan(doc.subTokens, start, end, tokenizer, ex.answers[0].text)
}

/** The doc spans: windows of max_tokens_for_doc sub-tokens every doc_stride (the while loop). */
export function docSpans(docTokens: number, maxTokensForDoc: number, stride: number): {start: number; length: number}[] {
  const spans: {start: number; length: number}[] = []
  let start = 0
  while (start < docTokens) {
    const length = Math.min(docTokens - start, maxTokensForDoc)
    spans.push({start, length})
    if (start + length === docTokens) break
    start += Math.min(length, stride)
  }
  return spans
}

/** _check_is_max_context: the window where the token has the most context on its shorter side. */
export function isMaxContext(spans: {start: number; length: number}[], cur: number, position: number): boolean {
  let bestScore = -Infinity
  let bestIndex = -1
  spans.forEach((span, i) => {
    const end = span.start + span.length - 1
    if (position < span.start || position > end) return
    const score = Math.min(position - span.start, end - position) + 0.01 * span.length
    if (score > bestScore) {
      bestScore = score
      bestIndex = i
    }
  })
  return cur === bestIndex
}
