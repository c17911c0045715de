import {errorAt} from '../stream/errors.js'
import type {Rec} from '../stream/ndjson.js'

/** Token record (docs/formats.md#token-records): one per input line. */
export interface TokenRecord {
  doc: number
  ids: number[]
  tokens?: string[]
}

/** Checks an id list: integers in [0, vocabSize) when the size is known. */
export function checkIds(ids: unknown, field: string, vocabSize: number | null, source: string, line: number): number[] {
  if (!Array.isArray(ids)) throw errorAt(source, line, `field "${field}" must be an array of token ids`)
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]
    if (!Number.isInteger(id) || id < 0) throw errorAt(source, line, `${field}[${i}] = ${JSON.stringify(id)} is not a token id`)
    if (vocabSize !== null && id >= vocabSize) {
      throw errorAt(source, line, `${field}[${i}] = ${id} is outside the vocabulary (size ${vocabSize})`)
    }
  }
  return ids as number[]
}

export function toTokenRecord(rec: Rec, vocabSize: number | null, source: string): TokenRecord {
  const v = rec.value
  if (!('ids' in v)) throw errorAt(source, rec.line, 'missing field "ids" (expected token records from span tokenize)')
  if (!Number.isInteger(v.doc)) throw errorAt(source, rec.line, 'field "doc" must be an integer')
  return {doc: v.doc as number, ids: checkIds(v.ids, 'ids', vocabSize, source, rec.line)}
}
