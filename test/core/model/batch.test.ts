import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {collate, toMaskedExample} from '../../../src/core/model/batch.js'
import {SpanError} from '../../../src/core/stream/errors.js'
import {example} from './helpers.js'

const opts = {padId: 0, maxTargets: 15, maxPositions: 512}

describe('collate', () => {
  it('pads to the longest example and flattens positions as b·T + t', () => {
    const rng = new Rng(1)
    const b = collate([example(6, 2, 3, rng), example(9, 3, 5, rng)], opts)
    expect([b.B, b.T]).toEqual([2, 9])
    expect(Array.from(b.mask.slice(0, 9))).toEqual([1, 1, 1, 1, 1, 1, 0, 0, 0])
    expect(Array.from(b.ids.slice(6, 9))).toEqual([0, 0, 0])
    expect(Array.from(b.mlmPos)).toEqual([2, 3, 9 + 3, 9 + 4, 9 + 5])
    // span [2,3] in n=6: boundaries 1 and 4 are real tokens; span [3,5] in n=9: 2 and 6
    expect(Array.from(b.sboLeft)).toEqual([1, 1, 11, 11, 11])
    expect(Array.from(b.sboRight)).toEqual([4, 4, 15, 15, 15])
    expect(Array.from(b.sboRel)).toEqual([0, 1, 0, 1, 2])
    expect(Array.from(b.sboLabels)).toEqual(Array.from(b.mlmLabels))
    expect(b.nextLabels).toBeNull()
  })

  it('gives spans whose boundary would be [CLS] or [SEP] MLM only (reference span_masking)', () => {
    const rng = new Rng(2)
    const b = collate([example(8, 1, 2, rng), example(8, 4, 6, rng), example(8, 2, 5, rng)], opts)
    expect(b.mlmPos.length).toBe(2 + 3 + 4)
    expect(Array.from(b.sboLeft)).toEqual([16 + 1, 16 + 1, 16 + 1, 16 + 1])
    expect(Array.from(b.sboRight)).toEqual([16 + 6, 16 + 6, 16 + 6, 16 + 6])
  })

  it('keeps only the first max_targets tokens of a long span as SBO targets', () => {
    const b = collate([example(12, 2, 8, new Rng(3))], {...opts, maxTargets: 4})
    expect(b.mlmPos.length).toBe(7)
    expect(Array.from(b.sboRel)).toEqual([0, 1, 2, 3])
  })

  it('pads to a fixed length, and refuses examples that do not fit', () => {
    const rng = new Rng(4)
    expect(collate([example(6, 2, 3, rng)], {...opts, length: 10}).T).toBe(10)
    expect(() => collate([example(12, 2, 3, rng)], {...opts, length: 10})).toThrow(SpanError)
    expect(() => collate([example(12, 2, 3, rng)], {...opts, maxPositions: 8})).toThrow(/positions/)
  })

  it('maps next to HF next_sentence_label (0 = continuation) and keeps segments', () => {
    const rng = new Rng(5)
    const a = {...example(6, 2, 2, rng), segments: [0, 0, 0, 1, 1, 1], next: true}
    const c = {...example(6, 2, 2, rng), segments: [0, 0, 1, 1, 1, 1], next: false}
    const b = collate([a, c], opts)
    expect(Array.from(b.nextLabels ?? [])).toEqual([0, 1])
    expect(Array.from(b.segments)).toEqual([0, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1])
  })
})

describe('toMaskedExample', () => {
  const rec = (value: Record<string, unknown>) => ({value, line: 7})
  it('accepts a well-formed record', () => {
    const ex = toMaskedExample(rec({ids: [1, 3, 2], targets: [[1, 9]], spans: [[1, 1, 'mask']]}), 40, 'stdin')
    expect(ex.targets).toEqual([[1, 9]])
  })
  it('names source and line on bad records', () => {
    expect(() => toMaskedExample(rec({ids: [1, 3, 2], targets: [[5, 9]], spans: []}), 40, 'stdin')).toThrow(/^stdin:7: target/)
    expect(() => toMaskedExample(rec({ids: [1, 3, 2], targets: [], spans: [[2, 1, 'mask']]}), 40, 'stdin')).toThrow(/^stdin:7: span/)
    expect(() => toMaskedExample(rec({ids: [1, 3, 2]}), 40, 'x.ndjson')).toThrow(/^x.ndjson:7: expected a masked example {ids, targets, spans}: missing field "targets"/)
    expect(() => toMaskedExample(rec({ids: [1, 3, 2], targets: [], spans: [], next: 1}), 40, 's')).toThrow(/next/)
  })
})
