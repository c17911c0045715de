import {errorAt, type SpanError} from '../stream/errors.js'
import type {StageKind} from '../stream/header.js'
import type {Rec} from '../stream/ndjson.js'
import {toMaskedExample} from './masked.js'
import {checkIds, parseDoc} from './records.js'
import {parseTags, type Tag} from './tags.js'

export type SpanKind = 'mask' | 'random' | 'keep'
export const SPAN_KINDS: readonly SpanKind[] = ['mask', 'random', 'keep']

/** The special ids inspect needs: content tokens are the ids other than these. */
export interface InspectSpecial {
  cls: number
  sep: number
  pad: number
}

/**
 * Any stage's record as inspect sees it (docs/formats.md):
 *   token record    {doc, ids, tokens?}
 *   block           {doc?, ids: [CLS, …, SEP], segments?, next?}
 *   masked example  {ids, targets: [[pos, original_id], …], spans: [[start, end, kind], …]}
 * Fields a kind does not have are null.
 */
export interface Example {
  ids: number[] // for masked examples, the input after masking
  doc: number | null
  next: boolean | null // pair blocks of the NSP baseline
  targets: Array<[number, number]> | null // [position in ids, original id]
  spans: Array<[number, number, SpanKind]> | null // [start, end (inclusive), kind]
  tags?: Tag[] | null // token records and blocks (docs/formats.md#tags)
  origins?: string[] | null // masked examples of a tagged scheme: each span's fourth element
}

const SHAPES = 'a token record {doc, ids}, a block {ids: [CLS … SEP]} or a masked example {ids, targets, spans}'

/**
 * The kind of a headerless stream, from its first record: masked examples have targets or
 * spans; pair blocks have segments or next; otherwise [CLS] … [SEP] (when the ids of those are
 * known) makes a block, and anything else with ids a token record. Null when `ids` is missing.
 */
export function detectKind(v: Record<string, unknown>, special: InspectSpecial | null): StageKind | null {
  if ('targets' in v || 'spans' in v) return 'masked'
  if (!Array.isArray(v.ids)) return null
  if ('segments' in v || 'next' in v) return 'blocks'
  const ids = v.ids as unknown[]
  if (special && ids.length >= 2 && ids[0] === special.cls && ids.at(-1) === special.sep) return 'blocks'
  return 'tokens'
}

export function unknownShape(rec: Rec, source: string): SpanError {
  const keys = Object.keys(rec.value)
  const got = keys.length === 0 ? 'an empty object' : `keys ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', …' : ''}`
  return errorAt(source, rec.line, `record of unknown shape (${got}); expected ${SHAPES}`)
}

/** Validates one record of a stream of `kind`, with ids below `vocabSize` when that is known. */
export function parseExample(rec: Rec, kind: StageKind, vocabSize: number | null, source: string): Example {
  const v = rec.value
  if (!('ids' in v)) throw unknownShape(rec, source)
  if (kind === 'masked') {
    const m = toMaskedExample(rec, vocabSize, source)
    const spans = m.spans as Array<[number, number, SpanKind]>
    return {ids: m.ids, doc: m.doc ?? null, next: m.next ?? null, targets: m.targets, spans, tags: null, origins: m.origins ?? null}
  }
  const ids = checkIds(v.ids, 'ids', vocabSize, source, rec.line)
  const bad = (msg: string) => errorAt(source, rec.line, msg)
  const doc = parseDoc(v.doc, bad)
  return {ids, doc, next: typeof v.next === 'boolean' ? v.next : null, targets: null, spans: null, tags: parseTags(v.tags, ids.length, bad), origins: null}
}
