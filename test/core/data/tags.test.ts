import {describe, expect, it} from 'vitest'
import {BlockPacker} from '../../../src/core/data/block.js'
import {toTokenRecord} from '../../../src/core/data/records.js'
import {parseTags} from '../../../src/core/data/tags.js'

const bad = (msg: string) => new Error(msg)
const parse = (raw: unknown, n = 10) => parseTags(raw, n, bad)

describe('tags (docs/formats.md#tags)', () => {
  it('absent or null is no tags; valid tags come back sorted by start', () => {
    expect(parse(undefined)).toEqual([])
    expect(parse(null)).toEqual([])
    expect(
      parse([
        [5, 6, 'ORG'],
        [0, 0, 'PER'],
        [7, 9, 'NP'],
      ]),
    ).toEqual([
      [0, 0, 'PER'],
      [5, 6, 'ORG'],
      [7, 9, 'NP'],
    ])
  })

  it('refuses overlaps (ends are inclusive: [2,4] and [4,5] share 4), positions past the record, non-integers, bad labels', () => {
    expect(() =>
      parse([
        [2, 4, 'A'],
        [4, 5, 'B'],
      ]),
    ).toThrow('tags[1] [4, 5] overlaps tags[0] [2, 4]')
    expect(() =>
      parse([
        [4, 5, 'B'],
        [0, 9, 'A'],
      ]),
    ).toThrow('overlaps')
    expect(() => parse([[2, 10, 'A']])).toThrow('tags[0][1] = 10 is past the record (10 ids; ends are inclusive)')
    expect(() => parse([[1.5, 2, 'A']])).toThrow('tags[0][0] = 1.5 is not a position')
    expect(() => parse([['1', 2, 'A']])).toThrow('tags[0][0] = "1" is not a position')
    expect(() => parse([[-1, 2, 'A']])).toThrow('is not a position')
    expect(() => parse([[3, 2, 'A']])).toThrow('tags[0] ends (2) before it starts (3)')
    expect(() => parse([[1, 2, '']])).toThrow('label must be a non-empty string')
    expect(() => parse([[1, 2, 7]])).toThrow('label must be a non-empty string')
    expect(() => parse([[1, 2]])).toThrow('tags[0] must be a [start, end, "LABEL"] triple')
    expect(() => parse({a: 1})).toThrow('field "tags" must be an array')
  })

  it('token records name the source and line of bad tags', () => {
    expect(() => toTokenRecord({value: {doc: 0, ids: [5, 6], tags: [[0, 2, 'X']]}, line: 7}, null, 'in.ndjson')).toThrow(
      /^in\.ndjson:7: tags\[0\]\[1\] = 2 is past the record/,
    )
    expect(toTokenRecord({value: {doc: 0, ids: [5, 6]}, line: 1}, null, 's')).toEqual({doc: 0, ids: [5, 6]})
  })
})

describe('block carries tags', () => {
  it("re-bases each line's tags to the block ([CLS] first), across lines packed together", () => {
    const p = new BlockPacker(12, 101, 102)
    expect(p.push({doc: 0, ids: [1, 2, 3], tags: [[1, 2, 'PER']]})).toEqual([])
    expect(
      p.push({
        doc: 0,
        ids: [4, 5, 6, 7],
        tags: [
          [0, 0, 'LOC'],
          [2, 3, 'NP'],
        ],
      }),
    ).toEqual([])
    const [b] = p.push({doc: 0, ids: [8, 9, 10, 11]}) // overflows: the first two lines make a block
    expect(b).toEqual({
      doc: 0,
      ids: [101, 1, 2, 3, 4, 5, 6, 7, 102],
      tags: [
        [2, 3, 'PER'],
        [4, 4, 'LOC'],
        [6, 7, 'NP'],
      ],
    })
    expect(p.finish()).toEqual([{doc: 0, ids: [101, 8, 9, 10, 11, 102]}])
    expect([p.keptTags, p.droppedTags]).toEqual([3, 0])
  })

  it('a line split at --len − 2 drops (and counts) the tags the cut crosses, keeps the others re-based', () => {
    const p = new BlockPacker(6, 101, 102) // room 4
    const out = p.push({
      doc: 1,
      ids: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
      tags: [
        [0, 1, 'A'],
        [3, 4, 'B'],
        [5, 5, 'C'],
        [7, 8, 'D'],
      ],
    })
    out.push(...p.finish())
    expect(out).toEqual([
      {doc: 1, ids: [101, 1, 2, 3, 4, 102], tags: [[1, 2, 'A']]},
      {doc: 1, ids: [101, 5, 6, 7, 8, 102], tags: [[2, 2, 'C']]},
      {doc: 1, ids: [101, 9, 10, 102]},
    ])
    expect([p.keptTags, p.droppedTags]).toEqual([2, 2])
  })
})
