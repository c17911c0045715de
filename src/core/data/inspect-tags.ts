import {IntHistogram} from './inspect-hist.js'
import type {Example} from './inspect-records.js'
import {spanWords} from './inspect-spans.js'

/** Per label (or per origin): how many spans and tokens. */
export interface LabelCount {
  spans: number
  tokens: number
}

/** What `span inspect` reports of the tags of token records or blocks (docs/formats.md#tags). */
export interface TagsSummary {
  records: number
  taggedRecords: number // records with at least one tag
  tags: number
  perRecord: number | null // tags per record (per block for blocks)
  byLabel: Record<string, LabelCount>
  lengthHistogram: IntHistogram // tag lengths in words (tokens without a vocabulary)
}

/** What `span inspect` reports of a tagged scheme's masked examples: the spans' fourth element. */
export interface OriginsSummary {
  byOrigin: Record<string, LabelCount> // "random" and each tag label
  taggedShare: {spans: number; tokens: number} // realised share of spans and of masked tokens from tags
}

/** Tags and span origins, counted one record at a time (memory: one entry per label). */
export class TagStats {
  private records = 0
  private tagged = 0
  private tags = 0
  private readonly byLabel = new Map<string, LabelCount>()
  private readonly byOrigin = new Map<string, LabelCount>()
  readonly lengths = new IntHistogram()

  constructor(private readonly cont: Uint8Array | null) {}

  add(ex: Example, original: readonly number[]): void {
    this.records++
    if (ex.tags && ex.tags.length > 0) this.tagged++
    for (const [s, e, label] of ex.tags ?? []) {
      this.tags++
      count(this.byLabel, label, e - s + 1)
      this.lengths.add(this.cont ? spanWords(original, s, e, this.cont) : e - s + 1)
    }
    if (!ex.origins || !ex.spans) return
    ex.spans.forEach(([s, e], k) => count(this.byOrigin, ex.origins![k], e - s + 1))
  }

  tagsSummary(): TagsSummary | null {
    if (this.tags === 0) return null
    const byLabel = Object.fromEntries([...this.byLabel.entries()].sort((a, b) => b[1].spans - a[1].spans))
    return {records: this.records, taggedRecords: this.tagged, tags: this.tags, perRecord: this.tags / this.records, byLabel, lengthHistogram: this.lengths}
  }

  originsSummary(): OriginsSummary | null {
    if (this.byOrigin.size === 0) return null
    let spans = 0
    let tokens = 0
    let tSpans = 0
    let tTokens = 0
    for (const [origin, c] of this.byOrigin) {
      spans += c.spans
      tokens += c.tokens
      if (origin !== 'random') {
        tSpans += c.spans
        tTokens += c.tokens
      }
    }
    const byOrigin = Object.fromEntries([...this.byOrigin.entries()].sort((a, b) => b[1].spans - a[1].spans))
    return {byOrigin, taggedShare: {spans: tSpans / spans, tokens: tTokens / tokens}}
  }
}

function count(m: Map<string, LabelCount>, key: string, tokens: number): void {
  const c = m.get(key) ?? {spans: 0, tokens: 0}
  c.spans++
  c.tokens += tokens
  m.set(key, c)
}
