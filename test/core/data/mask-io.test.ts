import {describe, expect, it} from 'vitest'
import {NdjsonBytes} from '../../../src/core/stream/ndjson-bytes.js'
import {toBlockRecord, writeMasked} from '../../../src/core/data/mask-io.js'
import {DECISIONS} from '../../../src/core/data/mask.js'

const rec = (value: Record<string, unknown>, line = 4) => ({value, line})
const parse = (value: Record<string, unknown>) => toBlockRecord(rec(value), 1000, 101, 102, 'blocks.ndjson')

describe('toBlockRecord', () => {
  it('keeps doc, segments and next when present', () => {
    expect(parse({doc: 2, ids: [101, 5, 102]})).toEqual({doc: 2, ids: [101, 5, 102]})
    expect(parse({ids: [101, 5, 102, 6, 102], segments: [0, 0, 0, 1, 1], next: false})).toEqual({
      ids: [101, 5, 102, 6, 102],
      segments: [0, 0, 0, 1, 1],
      next: false,
    })
  })

  it('names the source and line of what is wrong', () => {
    expect(() => parse({doc: 1})).toThrow('blocks.ndjson:4: missing field "ids" (expected blocks from span block)')
    expect(() => parse({ids: [101, 1000, 102]})).toThrow('blocks.ndjson:4: ids[1] = 1000 is outside the vocabulary (size 1000)')
    expect(() => parse({ids: [101, 1.5, 102]})).toThrow('blocks.ndjson:4: ids[1] = 1.5 is not a token id')
    expect(() => parse({ids: [5, 6]})).toThrow(/^blocks.ndjson:4: expected blocks \(from span block\), got ids that do not start with \[CLS\] \(101\)/)
    expect(() => parse({ids: [101, 102], targets: []})).toThrow('blocks.ndjson:4: expected blocks (from span block), got a masked example (from span mask)')
    expect(() => parse({doc: '1', ids: [101, 102]})).toThrow('blocks.ndjson:4: field "doc" must be an integer ≥ 0, got "1"')
    expect(() => parse({ids: [101, 102], segments: [0]})).toThrow('blocks.ndjson:4: field "segments" must be an array of 2 segment ids')
    expect(() => parse({ids: [101, 102], segments: [0, 2]})).toThrow('blocks.ndjson:4: segments[1] = 2: expected 0 or 1')
    expect(() => parse({ids: [101, 102], next: 'yes'})).toThrow('blocks.ndjson:4: field "next" must be true or false, got "yes"')
  })
})

describe('writeMasked', () => {
  it('writes the bytes JSON.stringify gives', () => {
    const out = new NdjsonBytes(8)
    const res = {ids: [101, 103, 103, 77, 102], targets: [1, 50, 2, 51, 3, 77], spans: [1, 2, 0, 3, 3, 2]}
    writeMasked(out, {doc: 12, ids: [101, 50, 51, 77, 102]}, res)
    writeMasked(out, {ids: [101, 50, 51, 77, 102], segments: [0, 0, 0, 1, 1], next: true}, {...res, targets: [], spans: []})
    const want = [
      {doc: 12, ids: res.ids, targets: [[1, 50], [2, 51], [3, 77]], spans: [[1, 2, DECISIONS[0]], [3, 3, DECISIONS[2]]]},
      {ids: res.ids, segments: [0, 0, 0, 1, 1], next: true, targets: [], spans: []},
    ]
    expect(out.take().toString()).toBe(want.map((x) => JSON.stringify(x) + '\n').join(''))
  })
})
