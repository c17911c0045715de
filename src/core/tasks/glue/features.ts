/**
 * GLUE examples as model inputs (BERT §4.1; run_classifier.py convert_single_example):
 * `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`, segment ids 0 then 1, truncated to --max-len with
 * BERT's _truncate_seq_pair (drop the last token of the longer sentence until both fit).
 * For Span Fine-tuning (Bao et al. §3.1) each sentence's words are segmented with the n-gram
 * dictionary (greedy, longest match first) and the segments become token spans of the sequence,
 * laid as the reference lays its chunk lengths (BAORONGZHOU/span-fine-tuning @bca4358,
 * data_process/data_processor.py DataProcessor.convert_examples_2_features): [CLS], sentence a's
 * spans, [SEP], sentence b's spans, [SEP], the special tokens one-token spans, and the spans
 * counted per sentence (r − 3 for a single sentence, ⌊r/2⌋ − 3 for each of a pair, as its
 * MultiTokenizer.tokenize keeps max_chunk_number − 3 chunks of the budget it is given), so the
 * second sentence keeps its spans however long the first is.
 */
import type {ClsHostBatch} from '../../model/classifier.js'
import {type TokenSpan, spanIndex, wholeRow} from '../../model/span-index.js'
import type {SpanFtSettings} from '../../model/span-ft.js'
import {type NgramDict, WordSplitter, tokenSpans, tokenWords} from '../../text/ngrams.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {GlueExample} from './read.js'
import type {GlueTask} from './tasks.js'
import {maxOf, pushAll} from '../../util/arrays.js'

/** One example, encoded. Spans are [first, last] token positions of the sequence (inclusive). */
export interface GlueFeature {
  index: string
  ids: Int32Array
  /** positions from here on are segment 1 (ids.length for a single sentence) */
  secondStart: number
  spans: [number, number][]
  /** class number, regression target, or null (test data) */
  label: number | null
}

export interface FeatureOptions {
  maxLen: number
  /** the n-gram dictionary of Span Fine-tuning, or null */
  dict: NgramDict | null
  /**
   * the model's span settings: with pool 'reference' the reference's layout above; absent or
   * 'masked' (checkpoints saved before it), the sentences' segments alone, the first r kept
   */
  spanFt?: SpanFtSettings | null
}

/** BERT's _truncate_seq_pair: shortens the longer list (in place) until the total fits. */
export function truncateSeqPair(a: unknown[], b: unknown[], maxTotal: number): void {
  while (a.length + b.length > maxTotal) {
    if (a.length > b.length) a.pop()
    else b.pop()
  }
}

/** The label as a number: the index in the task's labels, or the STS-B score. */
export function labelValue(task: Pick<GlueTask, 'labels'>, label: string | null): number | null {
  if (label === null) return null
  return task.labels === null ? Number(label) : task.labels.indexOf(label)
}

export class GlueFeaturizer {
  private readonly split = new WordSplitter()

  constructor(readonly task: Pick<GlueTask, 'labels'>, readonly tokenizer: WordPieceTokenizer, readonly opts: FeatureOptions) {
    if (opts.maxLen < 4) throw new RangeError('max-len must be at least 4')
  }

  feature(ex: GlueExample): GlueFeature {
    const sf = this.opts.spanFt
    if (sf?.truncation === 'reference' && this.opts.dict && sf.segmentation !== 'none') return this.referenceFeature(ex, sf)
    const {cls, sep} = this.tokenizer.vocab.special
    const a = this.tokenizer.encode(ex.a)
    const b = ex.b === null ? null : this.tokenizer.encode(ex.b)
    if (b) truncateSeqPair(a, b, this.opts.maxLen - 3)
    else a.length = Math.min(a.length, this.opts.maxLen - 2)
    const ids = [cls, ...a, sep, ...(b ? [...b, sep] : [])]
    const secondStart = b ? a.length + 2 : ids.length
    const reference = sf?.pool === 'reference' && (this.opts.dict !== null || sf.segmentation === 'none')
    const nb = b ? b.length : null
    const spans = reference ? this.referenceSpans(ex, a.length, nb, sf) : this.opts.dict ? this.legacySpans(ex, a.length, nb ?? 0) : []
    return {index: ex.index, ids: Int32Array.from(ids), secondStart, spans, label: labelValue(this.task, ex.label)}
  }

  /** [CLS], a's spans, [SEP] (, b's spans, [SEP]): the special tokens one-token spans, the sentences' counted apart. */
  private referenceSpans(ex: GlueExample, na: number, nb: number | null, sf: SpanFtSettings): TokenSpan[] {
    if (sf.segmentation === 'none') return wholeRow(na + (nb === null ? 2 : nb + 3))
    const budget = Math.max(0, nb === null ? sf.max_spans - 3 : Math.floor(sf.max_spans / 2) - 3)
    const out: TokenSpan[] = [[0, 0], ...this.spansOf(ex.a, na, 1, true).slice(0, budget), [na + 1, na + 1]]
    if (nb !== null) pushAll(out, this.spansOf(ex.b as string, nb, na + 2, true).slice(0, budget), [[na + nb + 2, na + nb + 2]])
    return out
  }

  /**
   * The reference's own cut (`--span-ft-truncation reference`; data_processor.py
   * convert_examples_2_features with MultiTokenizer.tokenize): each sentence keeps whole spans
   * from its start while it has fewer than C − 3 and their tokens fit in M − 3, where a pair's
   * sentences get C = ⌊r/2⌋, M = ⌊max-len/2⌋ − 2 each and a single sentence C = r, M = max-len;
   * the first span that does not fit ends the sentence (its tokens are dropped with it).
   */
  private referenceFeature(ex: GlueExample, sf: SpanFtSettings): GlueFeature {
    const {cls, sep} = this.tokenizer.vocab.special
    const pair = ex.b !== null
    const C = pair ? Math.floor(sf.max_spans / 2) : sf.max_spans
    const M = pair ? Math.floor(this.opts.maxLen / 2) - 2 : this.opts.maxLen
    const a = this.referenceCut(ex.a, C, M)
    const b = pair ? this.referenceCut(ex.b as string, C, M) : null
    const ids = [cls, ...a.ids, sep, ...(b ? [...b.ids, sep] : [])]
    const na = a.ids.length
    const spans: TokenSpan[] = [[0, 0], ...a.spans.map(([s, e]): TokenSpan => [s + 1, e + 1]), [na + 1, na + 1]]
    if (b) pushAll(spans, b.spans.map(([s, e]): TokenSpan => [s + na + 2, e + na + 2]), [[ids.length - 1, ids.length - 1]])
    return {index: ex.index, ids: Int32Array.from(ids), secondStart: b ? na + 2 : ids.length, spans, label: labelValue(this.task, ex.label)}
  }

  /** One sentence's kept token ids and spans (from 0) under the reference's cut. */
  private referenceCut(text: string, C: number, M: number): {ids: number[]; spans: TokenSpan[]} {
    const all = this.tokenizer.encode(text)
    const spans: TokenSpan[] = []
    let n = 0
    for (const [s, e] of this.spansOf(text, all.length, 0, true)) {
      if (spans.length >= C - 3 || n + (e - s + 1) > M - 3) break
      spans.push([s, e])
      n = e + 1
    }
    return {ids: all.slice(0, n), spans}
  }

  /** The sentences' segments alone (this module's layout before the reference's). */
  private legacySpans(ex: GlueExample, na: number, nb: number): TokenSpan[] {
    return [...this.spansOf(ex.a, na, 1, false), ...(ex.b === null ? [] : this.spansOf(ex.b, nb, na + 2, false))]
  }

  /** The dictionary segmentation of one sentence as token spans, cut to its kept `n` tokens, from `offset`. */
  private spansOf(text: string, n: number, offset: number, asReference: boolean): TokenSpan[] {
    const tokens = this.tokenizer.tokenize(text)
    if (tokens.length === 0 || n === 0) return []
    const {words, firstToken} = tokenWords(tokens, this.split)
    const dict = this.opts.dict as NgramDict
    const segments = asReference ? dict.segmentAsReference(words) : dict.segment(words)
    const out: TokenSpan[] = []
    for (const [s, e] of tokenSpans(segments, firstToken, tokens.length)) {
      if (s >= n) break
      out.push([offset + s, offset + Math.min(e, n - 1)])
    }
    return out
  }
}

/** Pads features to the longest of them; span index with `spans` = {r, l}; labels when asked. */
export function collateGlue(features: GlueFeature[], padId: number, spans: {r: number; l: number} | null, regression: boolean): ClsHostBatch {
  const B = features.length
  const T = maxOf(features.map((f) => f.ids.length))
  const ids = new Int32Array(B * T).fill(padId)
  const segments = new Int32Array(B * T)
  const mask = new Float32Array(B * T)
  features.forEach((f, b) => {
    ids.set(f.ids, b * T)
    mask.fill(1, b * T, b * T + f.ids.length)
    segments.fill(1, b * T + f.secondStart, b * T + f.ids.length)
  })
  const labeled = features.every((f) => f.label !== null)
  return {
    B, T, ids, segments, mask,
    spans: spans ? spanIndex(features.map((f) => f.spans), T, spans.r, spans.l) : null,
    classes: labeled && !regression ? Int32Array.from(features, (f) => f.label as number) : null,
    targets: labeled && regression ? Float32Array.from(features, (f) => f.label as number) : null,
  }
}
