/**
 * Masked examples (docs/formats.md#masked-examples), parsed and checked here and nowhere else:
 * `span pretrain` (train/examples.ts), its batches (model/batch.ts) and `span inspect`
 * (inspect-records.ts) all read them through toMaskedExample.
 */
import {errorAt} from '../util/errors.js'
import type {Rec} from '../stream/ndjson.js'
import {DECISIONS, type Decision} from './mask.js'
import {checkIds, checkSegments, parseDoc} from './records.js'
import {shownValue} from '../util/json-value.js'

/** A masked example record; positions index `ids`, span ends inclusive. */
export interface MaskedExample {
  ids: number[]
  targets: [number, number][] // [position, original id]
  spans: [number, number, string][] // [start, end, decision]
  origins?: string[] // tagged schemes: per span, the tag's label or "random" (the spans' fourth element)
  segments?: number[]
  next?: boolean
  doc?: number
}

/** Checks a masked example record (ids below vocabSize when known); errors name the source and line. */
export function toMaskedExample(rec: Rec, vocabSize: number | null, source: string): MaskedExample {
  const v = rec.value
  const bad = (msg: string) => errorAt(source, rec.line, msg)
  const ids = checkIds(v.ids, 'ids', vocabSize, source, rec.line)
  if (!('targets' in v) || !('spans' in v)) {
    throw bad(`expected a masked example {ids, targets, spans}: missing field "${'targets' in v ? 'spans' : 'targets'}"`)
  }
  const origins: string[] = []
  const ex: MaskedExample = {ids, targets: parseTargets(v.targets, ids.length, vocabSize, bad), spans: parseSpans(v.spans, ids.length, bad, origins)}
  if (origins.length > 0) ex.origins = origins
  checkAgreement(ex.targets, ex.spans, ids.length, bad)
  if (v.segments !== undefined) ex.segments = checkSegments(v.segments, ids.length, bad)
  if (v.next !== undefined) {
    if (typeof v.next !== 'boolean') throw bad(`field "next" must be true or false, got ${JSON.stringify(v.next)}`)
    ex.next = v.next
  }
  const doc = parseDoc(v.doc, bad)
  if (doc !== null) ex.doc = doc
  return ex
}

type Bad = (msg: string) => Error

/**
 * targets and spans describe one masking (docs/formats.md#masked-examples): each position a
 * target once; spans disjoint, and together exactly the target positions.
 */
function checkAgreement(targets: [number, number][], spans: [number, number, unknown][], n: number, bad: Bad): void {
  const covered = new Uint8Array(n)
  for (let i = 0; i < spans.length; i++) {
    for (let p = spans[i][0]; p <= spans[i][1]; p++) {
      if (covered[p]) throw bad(`spans[${i}] overlaps an earlier span at position ${p}`)
      covered[p] = 1
    }
  }
  for (let i = 0; i < targets.length; i++) {
    const p = targets[i][0]
    if (covered[p] === 2) throw bad(`targets[${i}]: position ${p} is a target twice`)
    if (covered[p] !== 1) throw bad(`targets[${i}] at position ${p} lies in no span: targets and spans disagree`)
    covered[p] = 2
  }
  const loose = covered.indexOf(1)
  if (loose >= 0) throw bad(`position ${loose} lies in a span but is not a target: targets and spans disagree`)
}

/** targets: [[pos, original_id], …] with pos an index into ids. */
function parseTargets(raw: unknown, n: number, vocabSize: number | null, bad: Bad): [number, number][] {
  if (!Array.isArray(raw)) throw bad('field "targets" must be an array of [position, original_id] pairs')
  return raw.map((t: unknown, i) => {
    if (!Array.isArray(t) || t.length !== 2) throw bad(`targets[${i}] must be a [position, original_id] pair`)
    checkPosition(t[0], n, `targets[${i}][0]`, bad)
    const id = t[1] as unknown
    if (!Number.isInteger(id) || (id as number) < 0) throw bad(`targets[${i}][1] = ${shownValue(id)} is not a token id`)
    if (vocabSize !== null && (id as number) >= vocabSize) throw bad(`targets[${i}][1] = ${String(id)} is outside the vocabulary (size ${vocabSize})`)
    return [t[0], t[1]] as [number, number]
  })
}

/**
 * spans: [[start, end, decision], …], ends inclusive, decision one of mask | random | keep; with a
 * tagged scheme every span has a fourth element, its origin (a tag label or "random"), put in `origins`.
 */
function parseSpans(raw: unknown, n: number, bad: Bad, origins: string[]): [number, number, Decision][] {
  if (!Array.isArray(raw)) throw bad('field "spans" must be an array of [start, end, kind] triples')
  const width = Array.isArray(raw[0]) && raw[0].length === 4 ? 4 : 3
  return raw.map((s: unknown, i) => {
    if (!Array.isArray(s) || s.length !== width)
      throw bad(`spans[${i}] must be a [start, end, kind${width === 4 ? ', origin] quadruple (as spans[0])' : '] triple'}`)
    if (width === 4) {
      if (typeof s[3] !== 'string' || s[3] === '') throw bad(`spans[${i}][3] = ${shownValue(s[3])}: the origin must be a tag label or "random"`)
      origins.push(s[3])
    }
    checkPosition(s[0], n, `spans[${i}][0]`, bad)
    checkPosition(s[1], n, `spans[${i}][1]`, bad)
    if (s[1] < s[0]) throw bad(`spans[${i}] ends (${s[1]}) before it starts (${s[0]})`)
    if (!DECISIONS.includes(s[2])) throw bad(`spans[${i}][2] = ${JSON.stringify(s[2])}: expected "mask", "random" or "keep"`)
    return [s[0], s[1], s[2]] as [number, number, Decision]
  })
}

function checkPosition(pos: unknown, n: number, field: string, bad: Bad): void {
  if (!Number.isInteger(pos) || (pos as number) < 0 || (pos as number) >= n) {
    throw bad(`${field} = ${JSON.stringify(pos)} is not a position in ids (length ${n})`)
  }
}
