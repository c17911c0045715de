import type {StageKind} from '../stream/header.js'
import type {Rec} from '../stream/ndjson.js'
import {IntHistogram, type Bin} from './inspect-hist.js'
import {detectKind, parseExample, unknownShape, type Example, type InspectSpecial} from './inspect-records.js'
import {MaskStats, originalIds, type KindCounts} from './inspect-spans.js'
import {meanSpanLength, spanLengthDistribution} from './spanlen.js'
import {TagStats, type LabelCount, type OriginsSummary} from './inspect-tags.js'

/** The span-length distribution the observed spans are compared with (SpanBERT §3.1). */
export interface SpanParams {
  p: number
  maxSpan: number
  from: 'header' | 'flags' | 'default' // where p and maxSpan came from
  scheme: string | null // `span mask --scheme`, when the header says
}

export interface InspectOptions {
  kind: StageKind | null // from the header or --kind; null: detected from the first record
  kindFrom: 'header' | 'flag' | null
  special: InspectSpecial | null // null: every id counts as content
  continuation: Uint8Array | null // from continuationTable; null: span lengths in tokens
  vocabSize: number | null // ids are checked against it when known
  span: SpanParams
}

export interface LengthSummary {
  unit: 'tokens'
  paddingFree: boolean // [PAD] tokens left out (needs the special ids)
  min: number | null
  mean: number | null
  median: number | null
  p95: number | null
  max: number | null
  histogram: Bin[]
}

/** One row of the span-length chart: a length ("1" … "10", then ">10"). */
export interface SpanLengthRow {
  length: string
  observed: number // spans of this length
  observedFraction: number
  theoretical: number // P(ℓ) of the clipped geometric distribution; 0 past maxSpan
}

export interface MaskingSummary {
  targets: number
  nonSpecialTokens: number | null
  maskRatio: number | null // targets / non-special tokens
  spans: number
  spansPerExample: number | null
  replacement: {perSpan: KindCounts; perToken: KindCounts} // fractions
  spanLength: {
    unit: 'words' | 'tokens'
    p: number
    maxSpan: number
    from: SpanParams['from']
    scheme: string | null
    rows: SpanLengthRow[]
    mean: number | null
    theoreticalMean: number
    meanTokens: number | null
  }
  consistency: {targetsOutsideSpans: number; spanTokensWithoutTarget: number}
  origins: OriginsSummary | null // tagged schemes (entity, noun-phrase): the spans' fourth element
}

/** Tags of token records or blocks (docs/formats.md#tags): counts, labels, lengths beside the geometric law. */
export interface TagsReport {
  records: number
  taggedRecords: number
  tags: number
  perRecord: number | null
  byLabel: Record<string, LabelCount>
  length: {unit: 'words' | 'tokens'; mean: number | null; rows: SpanLengthRow[]; geometricMean: number}
}

/** What `span inspect --json` prints. */
export interface InspectSummary {
  source: string
  kind: StageKind | null // null for an empty input
  kindFrom: 'header' | 'flag' | 'shape' | null
  records: number
  tokens: number // all ids, special tokens and padding included
  nonSpecialTokens: number | null // without [CLS], [SEP] and [PAD]; null when their ids are unknown
  documents: number | null // runs of records with the same `doc`; null when no record has one
  length: LengthSummary
  pairs: {examples: number; next: number} | null // blocks with `next` (NSP baseline)
  masking: MaskingSummary | null
  tags: TagsReport | null // null when no record has tags
}

const LENGTH_BINS = 8

/**
 * Accumulates the summary of one stream, a record at a time, in memory that does not grow with
 * the stream: counters and histograms of lengths only.
 */
export class Inspector {
  private kind: StageKind | null
  private kindFrom: InspectSummary['kindFrom']
  private records = 0
  private tokens = 0
  private nonSpecial = 0
  private documents = 0
  private lastDoc: number | null = null
  private readonly lengths = new IntHistogram()
  private pairs = {examples: 0, next: 0}
  private mask: MaskStats | null = null
  private readonly tagStats: TagStats

  constructor(private readonly source: string, private readonly opts: InspectOptions) {
    this.kind = opts.kind
    this.kindFrom = opts.kindFrom
    this.tagStats = new TagStats(opts.continuation)
  }

  add(rec: Rec): void {
    const kind = this.kind ?? this.detect(rec)
    if (kind === 'masked' && !this.mask) this.mask = new MaskStats(this.opts.continuation)
    const ex = parseExample(rec, kind, this.opts.vocabSize, this.source)
    this.records++
    this.tokens += ex.ids.length
    const original = kind === 'masked' ? originalIds(ex) : ex.ids // before masking
    this.countLength(original)
    this.countDoc(ex)
    if (ex.next !== null) {
      this.pairs.examples++
      if (ex.next) this.pairs.next++
    }
    this.mask?.add(ex, original)
    this.tagStats.add(ex, original)
  }

  /** The kind of a headerless stream, fixed by its first record. */
  private detect(rec: Rec): StageKind {
    const kind = detectKind(rec.value, this.opts.special)
    if (kind === null) throw unknownShape(rec, this.source)
    this.kind = kind
    this.kindFrom = 'shape'
    return kind
  }

  /** Padding-free length, and the count of content (non-special) tokens. */
  private countLength(ids: number[]): void {
    const sp = this.opts.special
    if (!sp) {
      this.lengths.add(ids.length)
      return
    }
    let pad = 0
    let special = 0
    for (const id of ids) {
      if (id === sp.pad) pad++
      if (id === sp.pad || id === sp.cls || id === sp.sep) special++
    }
    this.lengths.add(ids.length - pad)
    this.nonSpecial += ids.length - special
  }

  private countDoc(ex: Example): void {
    if (ex.doc === null) return
    if (ex.doc !== this.lastDoc) this.documents++
    this.lastDoc = ex.doc
  }

  summary(): InspectSummary {
    return {
      source: this.source,
      kind: this.kind,
      kindFrom: this.kind === null ? null : this.kindFrom,
      records: this.records,
      tokens: this.tokens,
      nonSpecialTokens: this.opts.special ? this.nonSpecial : null,
      documents: this.lastDoc === null ? null : this.documents,
      length: lengthSummary(this.lengths, this.opts.special !== null),
      pairs: this.pairs.examples > 0 ? {...this.pairs} : null,
      masking: this.kind === 'masked' ? this.masking() : null,
      tags: this.tagsReport(),
    }
  }

  /** Tags beside the clipped geometric law of --p/--max-span (what --scheme span would draw). */
  private tagsReport(): TagsReport | null {
    const t = this.tagStats.tagsSummary()
    if (!t) return null
    const dist = spanLengthDistribution(this.opts.span.p, this.opts.span.maxSpan)
    const {lengthHistogram: h, ...counts} = t
    const length = {unit: this.opts.continuation ? ('words' as const) : ('tokens' as const), mean: h.mean(), rows: spanLengthRows(h, dist), geometricMean: meanSpanLength(dist)}
    return {...counts, length}
  }

  /** The masking statistics; all zero when no masked example was seen (the chart of an empty stream). */
  masking(): MaskingSummary {
    const m = this.mask ?? new MaskStats(this.opts.continuation)
    const nonSpecial = this.opts.special ? this.nonSpecial : null
    return {
      targets: m.targets,
      nonSpecialTokens: nonSpecial,
      maskRatio: nonSpecial ? m.targets / nonSpecial : null,
      spans: m.spans,
      spansPerExample: m.examples > 0 ? m.spans / m.examples : null,
      replacement: {perSpan: fractions(m.perSpan), perToken: fractions(m.perToken)},
      spanLength: spanLengthSummary(m, this.opts.span, this.opts.continuation !== null),
      consistency: {targetsOutsideSpans: m.targetsOutsideSpans, spanTokensWithoutTarget: m.spanTokensWithoutTarget},
      origins: this.tagStats.originsSummary(),
    }
  }
}

function lengthSummary(h: IntHistogram, paddingFree: boolean): LengthSummary {
  return {
    unit: 'tokens',
    paddingFree,
    min: h.min,
    mean: h.mean(),
    median: h.quantile(0.5),
    p95: h.quantile(0.95),
    max: h.max,
    histogram: h.bins(LENGTH_BINS),
  }
}

function fractions(c: KindCounts): KindCounts {
  const total = c.mask + c.random + c.keep
  const f = (x: number) => (total === 0 ? 0 : x / total)
  return {mask: f(c.mask), random: f(c.random), keep: f(c.keep)}
}

function spanLengthSummary(m: MaskStats, sp: SpanParams, inWords: boolean): MaskingSummary['spanLength'] {
  const dist = spanLengthDistribution(sp.p, sp.maxSpan)
  return {
    unit: inWords ? 'words' : 'tokens',
    p: sp.p,
    maxSpan: sp.maxSpan,
    from: sp.from,
    scheme: sp.scheme,
    rows: spanLengthRows(m.spanWords, dist),
    mean: m.spanWords.mean(),
    theoreticalMean: meanSpanLength(dist),
    meanTokens: m.spanTokens.mean(),
  }
}

/** Rows 1 … maxSpan beside the theoretical P(ℓ), then one row for every longer (merged) span. */
export function spanLengthRows(h: IntHistogram, dist: number[]): SpanLengthRow[] {
  const share = (n: number) => (h.count === 0 ? 0 : n / h.count)
  const rows = dist.map((q, i) => ({length: String(i + 1), observed: h.get(i + 1), observedFraction: 0, theoretical: q}))
  let longer = 0
  for (const [len, n] of h.entries()) if (len > dist.length) longer += n
  rows.push({length: `>${dist.length}`, observed: longer, observedFraction: 0, theoretical: 0})
  for (const r of rows) r.observedFraction = share(r.observed)
  return rows
}

/** Summarises a whole record stream (the command's loop, also what tests call). */
export async function inspectRecords(source: string, records: AsyncIterable<Rec>, opts: InspectOptions): Promise<InspectSummary> {
  const inspector = new Inspector(source, opts)
  for await (const rec of records) inspector.add(rec)
  return inspector.summary()
}
