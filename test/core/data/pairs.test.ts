import {describe, expect, it} from 'vitest'
import {PairMaker, RecentDocs, truncatePair, type PairBlock} from '../../../src/core/data/pairs.js'
import type {TokenRecord} from '../../../src/core/data/records.js'
import {Rng} from '../../../src/core/data/rng.js'
import {describeData, vocab, wikiRecords} from './helpers.js'

const {cls, sep} = vocab.special
const STRIDE = 100_000 // synthetic id = doc·STRIDE + position in the document (+ 1000, clear of the special ids)

/** Documents whose every token says where it came from; some lines longer than any block. */
function syntheticDocs(docs: number, seed: number): TokenRecord[] {
  const rng = new Rng(seed)
  const recs: TokenRecord[] = []
  for (let doc = 0; doc < docs; doc++) {
    let pos = 0
    const lines = 1 + rng.int(25)
    for (let l = 0; l < lines; l++) {
      const n = rng.int(50) === 0 ? 100 + rng.int(200) : 1 + rng.int(40)
      recs.push({doc, ids: Array.from({length: n}, () => 1000 + doc * STRIDE + pos++)})
    }
  }
  return recs
}

function makePairs(recs: TokenRecord[], len: number, seed: number, pool?: number): PairBlock[] {
  const m = new PairMaker(len, cls, sep, new Rng(seed), pool)
  return [...recs.flatMap((r) => m.push(r)), ...m.finish()]
}

const where = (id: number) => ({doc: Math.floor((id - 1000) / STRIDE), pos: (id - 1000) % STRIDE})

/** The A and B segments of a pair block, checking its layout. */
function split(p: PairBlock, len: number): {a: number[]; b: number[]} {
  const mid = p.ids.indexOf(sep)
  expect(p.ids.length).toBeLessThanOrEqual(len)
  expect(p.ids[0]).toBe(cls)
  expect(p.ids.at(-1)).toBe(sep)
  expect(p.ids.filter((id) => id === sep).length).toBe(2)
  expect(p.segments).toEqual(p.ids.map((_, i) => (i <= mid ? 0 : 1)))
  const a = p.ids.slice(1, mid)
  const b = p.ids.slice(mid + 1, -1)
  expect(a.length).toBeGreaterThan(0)
  expect(b.length).toBeGreaterThan(0)
  return {a, b}
}

/** A stretch of consecutive tokens of one document. */
function contiguous(seg: number[]): {doc: number; start: number; end: number} {
  const first = where(seg[0])
  seg.forEach((id, i) => expect(where(id)).toEqual({doc: first.doc, pos: first.pos + i}))
  return {doc: first.doc, start: first.pos, end: first.pos + seg.length - 1}
}

describeData('PairMaker (BERT NSP pairs)', () => {
  for (const len of [16, 64, 128]) {
    it(`at --len ${len}: layout, segments, and a next label that matches the text`, () => {
      const pairs = makePairs(syntheticDocs(150, len), len, 1)
      let nexts = 0
      for (const p of pairs) {
        const {a, b} = split(p, len)
        const A = contiguous(a)
        const B = contiguous(b)
        expect(p.doc).toBe(A.doc)
        const truncated = p.ids.length === len
        if (p.next) {
          nexts++
          expect(B.doc).toBe(A.doc)
          expect(B.start).toBeGreaterThan(A.end)
          if (!truncated) expect(B.start).toBe(A.end + 1)
        } else {
          expect(B.doc === A.doc && B.start === A.end + 1).toBe(false)
          if (B.doc === A.doc) expect(A.doc).toBe(0) // same-document negatives only while no other document is seen
        }
      }
      // half, less the last chunks of documents, which have no continuation
      expect(nexts / pairs.length).toBeGreaterThan(0.4)
      expect(nexts / pairs.length).toBeLessThan(0.52)
    })
  }

  it('uses every line in some A or true B (random Bs send unused lines back), but for what truncation drops', () => {
    const recs = syntheticDocs(40, 2)
    const pairs = makePairs(recs, 512, 3) // no truncation at this length for most pairs
    const seenA = new Set<number>()
    for (const p of pairs) for (const id of split(p, 512).a) seenA.add(id)
    const firstTokens = recs.map((r) => r.ids[0])
    const missing = firstTokens.filter((id) => !seenA.has(id) && !pairs.some((p) => p.next && p.ids.includes(id)))
    expect(missing.length).toBeLessThan(firstTokens.length * 0.02) // only what truncation drops
  })

  it('fills blocks close to --len on WikiText-2, with B the continuation about half the time', () => {
    const pairs = makePairs(wikiRecords(), 128, 4)
    const mean = pairs.reduce((s, p) => s + p.ids.length, 0) / pairs.length
    expect(mean).toBeGreaterThan(120)
    expect(Math.abs(pairs.filter((p) => p.next).length / pairs.length - 0.5)).toBeLessThan(0.04)
    expect(Math.max(...pairs.map((p) => p.ids.length))).toBe(128)
  })

  it('is reproducible: same seed same pairs, another seed other pairs', () => {
    const recs = syntheticDocs(30, 5)
    expect(makePairs(recs, 64, 9)).toEqual(makePairs(recs, 64, 9))
    expect(makePairs(recs, 64, 9)).not.toEqual(makePairs(recs, 64, 10))
  })

  it('handles a stream that starts with a one-token document', () => {
    const pairs = makePairs([{doc: 0, ids: [1000]}, ...syntheticDocs(3, 6).map((r) => ({...r, doc: r.doc + 1}))], 32, 1)
    expect(pairs[0]).toEqual({doc: 0, ids: [cls, 1000, sep, 1000, sep], segments: [0, 0, 0, 1, 1], next: false})
  })
})

describe('RecentDocs', () => {
  it('keeps only the most recent documents within its token cap', () => {
    const pool = new RecentDocs(100)
    for (let doc = 0; doc < 50; doc++) for (let l = 0; l < 3; l++) pool.add(doc, new Array(10).fill(doc))
    const rng = new Rng(1)
    const picked = new Set<number>()
    for (let i = 0; i < 200; i++) picked.add(pool.pickOther(49, rng)![0][0])
    expect([...picked].sort((x, y) => x - y)).toEqual([47, 48]) // 4 docs × 30 tokens > 100: the current and two before
  })

  it('keeps the first lines of a document longer than the cap', () => {
    const pool = new RecentDocs(25)
    for (let l = 0; l < 5; l++) pool.add(0, new Array(10).fill(l))
    expect(pool.current(0).map((line) => line[0])).toEqual([0, 1])
    expect(pool.pickOther(0, new Rng(1))).toBeNull()
  })
})

describe('truncatePair (BERT truncate_seq_pair)', () => {
  it('trims the longer side, from the front or the back at random, to the maximum', () => {
    const rng = new Rng(3)
    let front = 0
    for (let t = 0; t < 1000; t++) {
      const [a0, a1, b0, b1] = truncatePair(300, 20, 100, rng)
      expect([a1 - a0, b1 - b0]).toEqual([80, 20])
      front += a0
    }
    expect(front / 1000).toBeGreaterThan(108) // 220 removals, half from the front
    expect(front / 1000).toBeLessThan(112)
    expect(truncatePair(10, 10, 9, rng).slice(2)).not.toEqual([0, 10]) // a tie trims B
    expect(truncatePair(3, 4, 10, rng)).toEqual([0, 3, 0, 4])
  })
})
