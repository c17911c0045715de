import {IntHistogram} from './inspect-hist.js'
import type {Example, SpanKind} from './inspect-records.js'

export type KindCounts = Record<SpanKind, number>

/**
 * 1 for the ids whose vocabulary string begins with `##` (a WordPiece continuation): such a
 * token does not start a word (docs/algorithms.md#tokenization).
 */
export function continuationTable(tokens: readonly string[]): Uint8Array {
  const table = new Uint8Array(tokens.length)
  tokens.forEach((t, i) => {
    if (t.startsWith('##')) table[i] = 1
  })
  return table
}

/**
 * A span's length in words: the word starts inside [start, end], plus one when the span begins
 * on a `##` piece (it covers the tail of a word). `original` are the ids before masking.
 */
export function spanWords(original: readonly number[], start: number, end: number, cont: Uint8Array): number {
  let words = cont[original[start]] === 1 ? 1 : 0
  for (let i = start; i <= end; i++) if (cont[original[i]] !== 1) words++
  return words
}

/** The ids before masking: the masked input with each target's original id put back. */
export function originalIds(ex: Example): number[] {
  const ids = ex.ids.slice()
  for (const [pos, id] of ex.targets ?? []) ids[pos] = id
  return ids
}

/**
 * Statistics of masked examples, accumulated one example at a time (nothing is kept per
 * example): targets, spans and their replacement kinds, span lengths in words (in tokens when
 * there is no vocabulary), and two consistency counts (docs/algorithms.md#span-masking: every masked position is a target).
 */
export class MaskStats {
  examples = 0
  targets = 0
  spans = 0
  readonly perSpan: KindCounts = {mask: 0, random: 0, keep: 0}
  readonly perToken: KindCounts = {mask: 0, random: 0, keep: 0}
  readonly spanWords = new IntHistogram() // in tokens when there is no vocabulary
  readonly spanTokens = new IntHistogram()
  targetsOutsideSpans = 0
  spanTokensWithoutTarget = 0

  /** `cont` from continuationTable, or null to count span lengths in tokens. */
  constructor(private readonly cont: Uint8Array | null) {}

  /** `original`: the ids before masking (originalIds), where word boundaries are read. */
  add(ex: Example, original: readonly number[] = originalIds(ex)): void {
    const targets = ex.targets ?? []
    const spans = ex.spans ?? []
    this.examples++
    this.targets += targets.length
    this.spans += spans.length
    for (const [start, end, kind] of spans) {
      const tokens = end - start + 1
      this.perSpan[kind]++
      this.perToken[kind] += tokens
      this.spanTokens.add(tokens)
      this.spanWords.add(this.cont ? spanWords(original, start, end, this.cont) : tokens)
    }
    this.checkCoverage(ex.ids.length, targets, spans)
  }

  /** Counts targets no span covers and span tokens that are not targets. */
  private checkCoverage(n: number, targets: Array<[number, number]>, spans: Array<[number, number, SpanKind]>): void {
    const covered = new Uint8Array(n) // 1: inside a span, 2: inside a span and a target
    for (const [start, end] of spans) covered.fill(1, start, end + 1)
    for (const [pos] of targets) {
      if (covered[pos] === 0) this.targetsOutsideSpans++
      else covered[pos] = 2
    }
    for (let i = 0; i < n; i++) if (covered[i] === 1) this.spanTokensWithoutTarget++
  }
}
