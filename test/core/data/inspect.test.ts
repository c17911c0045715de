import {describe, expect, it} from 'vitest'
import {IntHistogram} from '../../../src/core/data/inspect-hist.js'
import {Inspector, inspectRecords, spanLengthRows, type InspectOptions} from '../../../src/core/data/inspect.js'
import {detectKind} from '../../../src/core/data/inspect-records.js'
import {continuationTable, originalIds, spanWords} from '../../../src/core/data/inspect-spans.js'
import {meanSpanLength, spanLengthDistribution} from '../../../src/core/data/spanlen.js'
import {EXAMPLE_A, EXAMPLE_B, SPECIAL, VOCAB, recs, stream} from './inspect-fixtures.js'

const CONT = continuationTable(VOCAB)

function options(over: Partial<InspectOptions> = {}): InspectOptions {
  return {
    kind: null,
    kindFrom: null,
    special: SPECIAL,
    continuation: CONT,
    vocabSize: VOCAB.length,
    span: {p: 0.2, maxSpan: 10, from: 'default', scheme: null},
    ...over,
  }
}

describe('IntHistogram', () => {
  it('gives exact nearest-rank quantiles, mean and bins from counts', () => {
    const h = new IntHistogram()
    for (const v of [5, 1, 3, 3, 10, 2, 8, 3, 7, 4]) h.add(v)
    expect([h.count, h.min, h.max, h.mean()]).toEqual([10, 1, 10, 4.6])
    expect(h.quantile(0.5)).toBe(3) // rank 5 of 1 2 3 3 3 4 5 7 8 10
    expect(h.quantile(0.95)).toBe(10) // rank 10
    expect(h.bins(5)).toEqual([
      {from: 1, to: 2, count: 2},
      {from: 3, to: 4, count: 4},
      {from: 5, to: 6, count: 1},
      {from: 7, to: 8, count: 2},
      {from: 9, to: 10, count: 1},
    ])
  })

  it('is empty without values, and one bin when all values are equal', () => {
    const h = new IntHistogram()
    expect([h.mean(), h.quantile(0.5), h.bins(8)]).toEqual([null, null, []])
    h.add(512, 3)
    expect(h.bins(8)).toEqual([{from: 512, to: 512, count: 3}])
    expect(h.quantile(0.95)).toBe(512)
  })
})

describe('span length in words', () => {
  const ids = [2, 5, 7, 8, 9, 6, 11, 12, 10, 3] // [CLS] the un ##believ ##able cat ran ##ning dog [SEP]

  it('counts word starts, plus one for a span that begins on a ## piece', () => {
    expect(spanWords(ids, 1, 1, CONT)).toBe(1) // the
    expect(spanWords(ids, 2, 4, CONT)).toBe(1) // un ##believ ##able
    expect(spanWords(ids, 3, 4, CONT)).toBe(1) // ##believ ##able: the tail of one word
    expect(spanWords(ids, 3, 5, CONT)).toBe(2) // ##believ ##able cat
    expect(spanWords(ids, 7, 8, CONT)).toBe(2) // ##ning dog
    expect(spanWords(ids, 1, 8, CONT)).toBe(5) // the unbelievable cat running dog
  })

  it('reads word boundaries from the original ids, not the [MASK]ed input', () => {
    const orig = originalIds({ids: EXAMPLE_A.ids, doc: null, next: null, targets: EXAMPLE_A.targets as Array<[number, number]>, spans: null})
    expect(orig).toEqual([2, 5, 7, 8, 9, 6, 11, 12, 10, 3, 0, 0])
    expect(spanWords(orig, 3, 5, CONT)).toBe(2)
    expect(spanWords(EXAMPLE_A.ids, 3, 5, CONT)).toBe(3) // three [MASK]s would look like three words
  })
})

describe('Inspector on masked examples', () => {
  it('counts records, tokens, targets, ratios and the word-length histogram exactly', async () => {
    const s = await inspectRecords('test', stream([EXAMPLE_A, EXAMPLE_B]), options({kind: 'masked', kindFrom: 'header'}))
    expect([s.kind, s.records, s.tokens, s.nonSpecialTokens, s.documents]).toEqual(['masked', 2, 19, 13, null])
    expect(s.length).toMatchObject({paddingFree: true, min: 7, mean: 8.5, median: 7, p95: 10, max: 10})
    const m = s.masking!
    expect([m.targets, m.nonSpecialTokens, m.maskRatio, m.spans, m.spansPerExample]).toEqual([9, 13, 9 / 13, 4, 2])
    expect(m.replacement.perSpan).toEqual({mask: 0.5, random: 0.25, keep: 0.25})
    expect(m.replacement.perToken).toEqual({mask: 7 / 9, random: 1 / 9, keep: 1 / 9})
    expect(m.spanLength.unit).toBe('words')
    expect(m.spanLength.rows.slice(0, 4).map((r) => r.observed)).toEqual([2, 1, 1, 0]) // 1 word: ##ning, the; 2: ##believ ##able cat; 3: ran ##ning the cat
    expect(m.spanLength.rows.map((r) => r.observedFraction).reduce((a, b) => a + b)).toBeCloseTo(1, 12)
    expect(m.spanLength.mean).toBe(7 / 4)
    expect(m.spanLength.meanTokens).toBe(9 / 4)
    expect(m.consistency).toEqual({targetsOutsideSpans: 0, spanTokensWithoutTarget: 0})
  })

  it('falls back to span lengths in tokens without a vocabulary', async () => {
    const s = await inspectRecords('test', stream([EXAMPLE_A, EXAMPLE_B]), options({kind: 'masked', continuation: null}))
    expect(s.masking!.spanLength.unit).toBe('tokens')
    expect(s.masking!.spanLength.rows.slice(0, 5).map((r) => r.observed)).toEqual([2, 0, 1, 1, 0])
  })

  it('leaves the mask ratio out when the special ids are unknown', async () => {
    const s = await inspectRecords('test', stream([EXAMPLE_A]), options({kind: 'masked', special: null}))
    expect([s.nonSpecialTokens, s.masking!.maskRatio, s.length.paddingFree, s.length.max]).toEqual([null, null, false, 12])
  })

  it('puts merged spans longer than max-span in the last bucket', async () => {
    const ids = [2, 5, 6, 5, 6, 5, 6, 3] // [CLS] the cat the cat the cat [SEP]
    const ex = {ids: [2, 4, 4, 4, 4, 4, 4, 3], targets: [1, 2, 3, 4, 5, 6].map((i) => [i, ids[i]]), spans: [[1, 6, 'mask']]}
    const s = await inspectRecords('test', stream([ex]), options({kind: 'masked', span: {p: 0.2, maxSpan: 4, from: 'flags', scheme: null}}))
    const rows = s.masking!.spanLength.rows
    expect(rows.map((r) => r.length)).toEqual(['1', '2', '3', '4', '>4'])
    expect(rows.at(-1)).toEqual({length: '>4', observed: 1, observedFraction: 1, theoretical: 0})
  })

  it('refuses targets and spans that disagree, at source:line (issue 25 cause 8)', async () => {
    const cases: [object, string][] = [
      [{ids: [2, 4, 4, 6, 3], targets: [[1, 5], [3, 6]], spans: [[1, 2, 'mask']]}, 'test:1: targets[1] at position 3 lies in no span: targets and spans disagree'],
      [{ids: [2, 4, 4, 6, 3], targets: [[1, 5]], spans: [[1, 2, 'mask']]}, 'test:1: position 2 lies in a span but is not a target: targets and spans disagree'],
      [{ids: [2, 4, 4, 6, 3], targets: [[1, 5], [1, 5]], spans: [[1, 1, 'mask']]}, 'test:1: targets[1]: position 1 is a target twice'],
      [{ids: [2, 4, 4, 6, 3], targets: [[1, 5], [2, 5]], spans: [[1, 2, 'mask'], [2, 2, 'keep']]}, 'test:1: spans[1] overlaps an earlier span at position 2'],
    ]
    for (const [ex, msg] of cases) await expect(inspectRecords('test', stream([ex]), options({kind: 'masked'}))).rejects.toThrow(msg)
  })
})

describe('theoretical column', () => {
  it('is spanLengthDistribution(p, maxSpan), then 0 past the clip', () => {
    for (const [p, max] of [[0.2, 10], [0.3, 5], [0.1, 15]]) {
      const dist = spanLengthDistribution(p, max)
      const rows = spanLengthRows(new IntHistogram(), dist)
      expect(rows.slice(0, max).map((r) => r.theoretical)).toEqual(dist)
      expect(rows[max]).toEqual({length: `>${max}`, observed: 0, observedFraction: 0, theoretical: 0})
    }
  })

  it('has the SpanBERT mean of 3.80 words at p = 0.2, max 10', async () => {
    const s = await inspectRecords('test', stream([EXAMPLE_A]), options({kind: 'masked'}))
    expect(s.masking!.spanLength.theoreticalMean).toBe(meanSpanLength(spanLengthDistribution(0.2, 10)))
    expect(s.masking!.spanLength.theoreticalMean.toFixed(2)).toBe('3.80')
  })
})

describe('Inspector on token records and blocks', () => {
  it('counts documents as runs of equal doc, and token lengths', async () => {
    const docs = [0, 0, 1, 1, 1, 2, 0]
    const s = await inspectRecords('test', stream(docs.map((doc, i) => ({doc, ids: Array(i + 1).fill(5)}))), options({special: null}))
    expect([s.kind, s.kindFrom, s.records, s.tokens, s.documents, s.masking]).toEqual(['tokens', 'shape', 7, 28, 4, null])
    expect(s.length).toMatchObject({min: 1, max: 7, median: 4, p95: 7, mean: 4})
  })

  it('reads padding-free block lengths and the next flag of pair blocks', async () => {
    const blocks = [
      {doc: 0, ids: [2, 5, 6, 3, 0, 0], segments: [0, 0, 0, 0, 0, 0], next: true},
      {doc: 0, ids: [2, 10, 11, 12, 3, 0], segments: [0, 0, 0, 0, 0, 0], next: false},
    ]
    const s = await inspectRecords('test', stream(blocks), options())
    expect([s.kind, s.tokens, s.nonSpecialTokens, s.documents, s.pairs]).toEqual(['blocks', 12, 5, 1, {examples: 2, next: 1}])
    expect([s.length.min, s.length.max]).toEqual([4, 5])
  })

  it('is an empty summary for no records', async () => {
    const s = await inspectRecords('test', stream([]), options())
    expect([s.kind, s.records, s.tokens, s.documents, s.length.min, s.length.histogram, s.masking]).toEqual([null, 0, 0, null, null, [], null])
  })
})

describe('record kinds and bad records', () => {
  it('detects the kind of a headerless stream from the first record', () => {
    expect(detectKind({ids: [2, 3], targets: [], spans: []}, null)).toBe('masked')
    expect(detectKind({ids: [2, 5, 3], next: true}, null)).toBe('blocks')
    expect(detectKind({doc: 0, ids: [2, 5, 3]}, SPECIAL)).toBe('blocks')
    expect(detectKind({doc: 0, ids: [2, 5, 3]}, null)).toBe('tokens')
    expect(detectKind({doc: 0, ids: [5, 6]}, SPECIAL)).toBe('tokens')
    expect(detectKind({foo: 1}, SPECIAL)).toBeNull()
  })

  it('names the line of a record of unknown shape', () => {
    const insp = new Inspector('stdin', options())
    const [rec] = recs([{foo: 1, bar: 2}], 3)
    expect(() => insp.add(rec)).toThrow(/^stdin:3: record of unknown shape \(keys foo, bar\); expected a token record/)
  })

  it('rejects a record of another shape inside a masked stream', () => {
    const insp = new Inspector('stdin', options())
    const [a, b] = recs([EXAMPLE_A, {ids: [2, 3], targets: []}])
    insp.add(a)
    expect(() => insp.add(b)).toThrow('stdin:2: expected a masked example {ids, targets, spans}: missing field "spans"')
  })

  it.each([
    [{...EXAMPLE_B, spans: [[4, 2, 'mask']]}, 'spans[0] ends (2) before it starts (4)'],
    [{...EXAMPLE_B, spans: [[2, 9, 'mask']]}, 'spans[0][1] = 9 is not a position in ids (length 7)'],
    [{...EXAMPLE_B, spans: [[2, 5, 'hide']]}, 'spans[0][2] = "hide": expected "mask", "random" or "keep"'],
    [{...EXAMPLE_B, targets: [[2, 99]]}, 'targets[0][1] = 99 is outside the vocabulary (size 13)'],
    [{...EXAMPLE_B, targets: [7]}, 'targets[0] must be a [position, original_id] pair'],
    [{...EXAMPLE_B, ids: [2, 'x', 3]}, 'ids[1] = "x" is not a token id'],
    [{...EXAMPLE_B, doc: 'a'}, 'field "doc" must be an integer ≥ 0, got "a"'],
  ])('rejects a malformed masked example: %j', (value, message) => {
    const insp = new Inspector('in.ndjson', options({kind: 'masked'}))
    expect(() => insp.add(recs([value], 5)[0])).toThrow(`in.ndjson:5: ${message}`)
  })
})
