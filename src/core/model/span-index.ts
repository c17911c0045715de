/**
 * Span Fine-tuning's span index of a batch on the host (Bao et al. §3.2; docs/algorithms.md#span-fine-tuning):
 * row b's spans, each a [first, last] token range (inclusive), laid into r spans of l slots as
 * the reference fills its chunk grid (BAORONGZHOU/span-fine-tuning @bca4358, modeling.py
 * ChunkLevelFeatureEncoderMultiCnn.forward: span i takes its first l tokens, spans past r are
 * dropped, the rest of the grid stays zero).
 */
import type {Rng} from '../util/rng.js'
import type {SpanIndex} from './span-ft.js'

export type TokenSpan = [number, number]

/** The n-gram dictionary of a Span Fine-tuning model, copied beside it so predict needs nothing else. */
export const SPAN_FT_DICT_FILE = 'span_ft_ngrams.txt'

/** The grid of a batch (T positions per row); with `tokenSlots`, each token's slot for the token level. */
export function spanIndex(rows: readonly (readonly TokenSpan[])[], T: number, r: number, l: number, tokenSlots = false): SpanIndex {
  const B = rows.length
  const positions = new Int32Array(B * r * l)
  const mask = new Float32Array(B * r * l)
  const slot = tokenSlots ? new Int32Array(B * T).fill(B * r * l) : undefined
  rows.forEach((spans, b) => {
    spans.slice(0, r).forEach(([s, e], i) => {
      const n = Math.min(e - s + 1, l)
      for (let j = 0; j < n; j++) {
        const at = (b * r + i) * l + j
        positions[at] = b * T + s + j
        mask[at] = 1
        if (slot) slot[b * T + s + j] = at
      }
    })
  })
  return {r, l, positions, mask, tokenSlot: slot}
}

/**
 * The "random segmentation" of the reference (run_classifier_direct.py do_random_chunk): the
 * spans' lengths shuffled, laid again from the first span's start. The reference's chunk lists
 * cover the sequence from position 0 without gaps ([CLS], the sentences' spans, [SEP]s), so
 * the shuffled lengths tile the same tokens.
 */
export function shuffleSpanLengths(spans: readonly TokenSpan[], rng: Rng): TokenSpan[] {
  if (spans.length === 0) return []
  const lens = spans.map(([s, e]) => e - s + 1)
  for (let i = lens.length - 1; i > 0; i--) {
    const j = rng.int(i + 1)
    ;[lens[i], lens[j]] = [lens[j], lens[i]]
  }
  let at = spans[0][0]
  return lens.map((n) => {
    const span: TokenSpan = [at, at + n - 1]
    at += n
    return span
  })
}

/** One span over every token of a row [0, n−1] (the "+ CNN" ablation: no segmentation). */
export function wholeRow(n: number): TokenSpan[] {
  return n > 0 ? [[0, n - 1]] : []
}
