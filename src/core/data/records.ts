import {errorAt} from '../stream/errors.js'
import type {Rec} from '../stream/ndjson.js'
import {shownValue} from '../util/json-value.js'
import {parseTags, type Tag} from './tags.js'

/** Token record (docs/formats.md#token-records): one per input line. */
export interface TokenRecord {
  doc: number
  ids: number[]
  tokens?: string[]
  tags?: Tag[] // docs/formats.md#tags: over ids, ends inclusive; absent when the record has none
}

/** Checks an id list: integers in [0, vocabSize) when the size is known. */
export function checkIds(ids: unknown, field: string, vocabSize: number | null, source: string, line: number): number[] {
  if (!Array.isArray(ids)) throw errorAt(source, line, `field "${field}" must be an array of token ids`)
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]
    if (!Number.isInteger(id) || id < 0) throw errorAt(source, line, `${field}[${i}] = ${shownValue(id)} is not a token id`)
    if (vocabSize !== null && id >= vocabSize) {
      throw errorAt(source, line, `${field}[${i}] = ${id} is outside the vocabulary (size ${vocabSize})`)
    }
  }
  return ids as number[]
}

/** segments: one 0 or 1 per id (pair blocks and the masked examples made from them). */
export function checkSegments(seg: unknown, n: number, bad: (msg: string) => Error): number[] {
  if (!Array.isArray(seg) || seg.length !== n) throw bad(`field "segments" must be an array of ${n} segment ids (one per id)`)
  for (let i = 0; i < n; i++) {
    if (seg[i] !== 0 && seg[i] !== 1) throw bad(`segments[${i}] = ${shownValue(seg[i])}: expected 0 or 1`)
  }
  return seg as number[]
}

/** An optional `doc`: null when absent, else an integer ≥ 0 (docs/formats.md#token-records). */
export function parseDoc(doc: unknown, bad: (msg: string) => Error): number | null {
  if (doc === undefined || doc === null) return null
  if (!Number.isInteger(doc) || (doc as number) < 0) throw bad(`field "doc" must be an integer ≥ 0, got ${JSON.stringify(doc)}`)
  return doc as number
}

/** Checks a token record (docs/formats.md#token-records): `doc` and `ids` required. */
export function toTokenRecord(rec: Rec, vocabSize: number | null, source: string): TokenRecord {
  const v = rec.value
  if (!('ids' in v)) throw errorAt(source, rec.line, 'missing field "ids" (expected token records from span tokenize)')
  if (v.doc === undefined) throw errorAt(source, rec.line, 'missing field "doc" (expected token records from span tokenize)')
  if (!Number.isInteger(v.doc) || (v.doc as number) < 0) throw errorAt(source, rec.line, `field "doc" must be an integer ≥ 0, got ${JSON.stringify(v.doc)}`)
  const ids = checkIds(v.ids, 'ids', vocabSize, source, rec.line)
  const tags = parseTags(v.tags, ids.length, (msg) => errorAt(source, rec.line, msg))
  return tags.length > 0 ? {doc: v.doc as number, ids, tags} : {doc: v.doc as number, ids}
}
