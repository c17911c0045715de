import {errorAt, type SpanError} from '../stream/errors.js'
import type {StageKind} from '../stream/header.js'
import type {Rec} from '../stream/ndjson.js'
import {checkIds} from './records.js'

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
  const ids = checkIds(v.ids, 'ids', vocabSize, source, rec.line)
  const ex: Example = {ids, doc: parseDoc(v.doc, source, rec.line), next: null, targets: null, spans: null}
  if (typeof v.next === 'boolean') ex.next = v.next
  if (kind !== 'masked') return ex
  if (!('targets' in v) || !('spans' in v)) {
    throw errorAt(source, rec.line, `expected a masked example {ids, targets, spans}: missing field "${'targets' in v ? 'spans' : 'targets'}"`)
  }
  ex.targets = parseTargets(v.targets, ids.length, vocabSize, source, rec.line)
  ex.spans = parseSpans(v.spans, ids.length, source, rec.line)
  return ex
}

function parseDoc(doc: unknown, source: string, line: number): number | null {
  if (doc === undefined || doc === null) return null
  if (!Number.isInteger(doc)) throw errorAt(source, line, `field "doc" must be an integer, got ${JSON.stringify(doc)}`)
  return doc as number
}

/** targets: [[pos, original_id], …] with pos an index into ids. */
function parseTargets(raw: unknown, n: number, vocabSize: number | null, source: string, line: number): Array<[number, number]> {
  if (!Array.isArray(raw)) throw errorAt(source, line, 'field "targets" must be an array of [position, original_id] pairs')
  return raw.map((t, i) => {
    if (!Array.isArray(t) || t.length !== 2) throw errorAt(source, line, `targets[${i}] must be a [position, original_id] pair`)
    checkPosition(t[0], n, `targets[${i}][0]`, source, line)
    checkId(t[1], `targets[${i}][1]`, vocabSize, source, line)
    return [t[0], t[1]] as [number, number]
  })
}

/** spans: [[start, end, kind], …], ends inclusive, kind one of mask | random | keep. */
function parseSpans(raw: unknown, n: number, source: string, line: number): Array<[number, number, SpanKind]> {
  if (!Array.isArray(raw)) throw errorAt(source, line, 'field "spans" must be an array of [start, end, kind] triples')
  return raw.map((s, i) => {
    if (!Array.isArray(s) || s.length !== 3) throw errorAt(source, line, `spans[${i}] must be a [start, end, kind] triple`)
    checkPosition(s[0], n, `spans[${i}][0]`, source, line)
    checkPosition(s[1], n, `spans[${i}][1]`, source, line)
    if (s[1] < s[0]) throw errorAt(source, line, `spans[${i}] ends (${s[1]}) before it starts (${s[0]})`)
    if (!SPAN_KINDS.includes(s[2])) {
      throw errorAt(source, line, `spans[${i}][2] = ${JSON.stringify(s[2])}: expected "mask", "random" or "keep"`)
    }
    return [s[0], s[1], s[2]] as [number, number, SpanKind]
  })
}

function checkId(id: unknown, field: string, vocabSize: number | null, source: string, line: number): void {
  if (!Number.isInteger(id) || (id as number) < 0) throw errorAt(source, line, `${field} = ${JSON.stringify(id)} is not a token id`)
  if (vocabSize !== null && (id as number) >= vocabSize) throw errorAt(source, line, `${field} = ${id} is outside the vocabulary (size ${vocabSize})`)
}

function checkPosition(pos: unknown, n: number, field: string, source: string, line: number): void {
  if (!Number.isInteger(pos) || (pos as number) < 0 || (pos as number) >= n) {
    throw errorAt(source, line, `${field} = ${JSON.stringify(pos)} is not a position in ids (length ${n})`)
  }
}
