/**
 * GLUE examples as model inputs (BERT §4.1; run_classifier.py convert_single_example):
 * `[CLS] a [SEP]` or `[CLS] a [SEP] b [SEP]`, segment ids 0 then 1, truncated to --max-len with
 * BERT's _truncate_seq_pair (drop the last token of the longer sentence until both fit).
 * For Span Fine-tuning (Bao et al. §3.1) each sentence's words are segmented with the n-gram
 * dictionary (greedy, longest match first) and the segments become token spans of the sequence.
 */
import type {SpanIndex} from '../../model/span-ft.js'
import type {ClsHostBatch} from '../../model/classifier.js'
import {type NgramDict, WordSplitter, tokenSpans, tokenWords} from '../../text/ngrams.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {GlueExample} from './read.js'
import type {GlueTask} from './tasks.js'

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
}

/** BERT's _truncate_seq_pair: shortens the longer list (in place) until the total fits. */
export function truncateSeqPair(a: unknown[], b: unknown[], maxTotal: number): void {
  while (a.length + b.length > maxTotal) {
    if (a.length > b.length) a.pop()
    else b.pop()
  }
}

/** The label as a number: the index in the task's labels, or the STS-B score. */
export function labelValue(task: GlueTask, label: string | null): number | null {
  if (label === null) return null
  return task.labels === null ? Number(label) : task.labels.indexOf(label)
}

export class GlueFeaturizer {
  private readonly split = new WordSplitter()

  constructor(readonly task: GlueTask, readonly tokenizer: WordPieceTokenizer, readonly opts: FeatureOptions) {
    if (opts.maxLen < 4) throw new RangeError('max-len must be at least 4')
  }

  feature(ex: GlueExample): GlueFeature {
    const {cls, sep} = this.tokenizer.vocab.special
    const a = this.tokenizer.encode(ex.a)
    const b = ex.b === null ? null : this.tokenizer.encode(ex.b)
    if (b) truncateSeqPair(a, b, this.opts.maxLen - 3)
    else a.length = Math.min(a.length, this.opts.maxLen - 2)
    const ids = [cls, ...a, sep, ...(b ? [...b, sep] : [])]
    const secondStart = b ? a.length + 2 : ids.length
    const spans = this.opts.dict ? [...this.spansOf(ex.a, a.length, 1), ...(b ? this.spansOf(ex.b as string, b.length, a.length + 2) : [])] : []
    return {index: ex.index, ids: Int32Array.from(ids), secondStart, spans, label: labelValue(this.task, ex.label)}
  }

  /** The dictionary segmentation of one sentence as token spans, cut to its kept `n` tokens, from `offset`. */
  private spansOf(text: string, n: number, offset: number): [number, number][] {
    const tokens = this.tokenizer.tokenize(text)
    if (tokens.length === 0 || n === 0) return []
    const {words, firstToken} = tokenWords(tokens, this.split)
    const segments = (this.opts.dict as NgramDict).segment(words)
    const out: [number, number][] = []
    for (const [s, e] of tokenSpans(segments, firstToken, tokens.length)) {
      if (s >= n) break
      out.push([offset + s, offset + Math.min(e, n - 1)])
    }
    return out
  }
}

/** The span index of a batch: at most r spans per row, at most l tokens per span (§4.1). */
export function spanIndex(features: GlueFeature[], T: number, r: number, l: number): SpanIndex {
  const B = features.length
  const positions = new Int32Array(B * r * l)
  const mask = new Float32Array(B * r * l)
  features.forEach((f, b) => {
    f.spans.slice(0, r).forEach(([s, e], i) => {
      const n = Math.min(e - s + 1, l)
      for (let j = 0; j < n; j++) {
        const at = (b * r + i) * l + j
        positions[at] = b * T + s + j
        mask[at] = 1
      }
    })
  })
  return {r, l, positions, mask}
}

/** Pads features to the longest of them; span index with `spans` = {r, l}; labels when asked. */
export function collateGlue(features: GlueFeature[], padId: number, spans: {r: number; l: number} | null, regression: boolean): ClsHostBatch {
  const B = features.length
  const T = Math.max(...features.map((f) => f.ids.length))
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
    spans: spans ? spanIndex(features, T, spans.r, spans.l) : null,
    classes: labeled && !regression ? Int32Array.from(features, (f) => f.label as number) : null,
    targets: labeled && regression ? Float32Array.from(features, (f) => f.label as number) : null,
  }
}
