import {expect, it} from 'vitest'
import {Masker, type MaskOptions} from '../../../src/core/data/mask.js'
import {NdjsonBytes} from '../../../src/core/stream/ndjson-bytes.js'
import {MaskStream} from '../../../src/core/data/mask-stream.js'
import {Rng} from '../../../src/core/data/rng.js'
import {Unigram} from '../../../src/core/data/unigram.js'
import {describeData, mv, vocab} from './helpers.js'

const {cls, sep} = vocab.special
const X = vocab.ids.get('apple')!
const Y = vocab.ids.get('river')!
const OPTS: MaskOptions = {scheme: 'subword', ratio: 0.5, p: 0.2, maxSpan: 10}

/** Masks the blocks through a MaskStream; returns the parsed records. */
function run(blocks: number[][], prefix: number, seed = 1) {
  const unigram = new Unigram(mv.special)
  const out = new NdjsonBytes()
  const stream = new MaskStream(new Masker(OPTS, mv, unigram), new Rng(seed), unigram, true, out, prefix)
  blocks.forEach((ids, doc) => stream.push({doc, ids}))
  stream.finish()
  return out
    .take()
    .toString()
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l))
}

/** The random replacements of an example: masked positions holding neither [MASK] nor the original. */
const drawn = (rec: {ids: number[]; spans: [number, number, string][]}) =>
  rec.spans.filter((s) => s[2] === 'random').flatMap(([s, e]) => rec.ids.slice(s, e + 1))

describeData('MaskStream', () => {
  // one block of X, then many of Y: the estimate decides what random replacements the first block gets
  const blocks = [[cls, ...Array(200).fill(X), sep], ...Array.from({length: 50}, () => [cls, ...Array(200).fill(Y), sep])]

  it('counts a prefix of the input before masking, so early blocks draw from the whole prefix', () => {
    const first = run(blocks, 1_000_000)[0]
    const ids = drawn(first)
    expect(ids.length).toBeGreaterThan(3)
    expect(ids.filter((id) => id === Y).length / ids.length).toBeGreaterThan(0.8) // Y is 50/51 of the counts
  })

  it('without a prefix, counts each block as it comes', () => {
    const recs = run(blocks, 0)
    expect(new Set(drawn(recs[0]))).toEqual(new Set([X])) // only the first block counted yet
    expect(recs.map((r) => r.doc)).toEqual(blocks.map((_, i) => i))
  })

  it('writes every block once, in order, whatever the prefix, and reproducibly', () => {
    for (const prefix of [0, 1000, 1_000_000]) {
      const recs = run(blocks, prefix)
      expect(recs.map((r) => r.doc)).toEqual(blocks.map((_, i) => i))
      expect(recs.every((r) => r.targets.length === 100)).toBe(true)
    }
    expect(run(blocks, 1000, 3)).toEqual(run(blocks, 1000, 3))
    expect(run(blocks, 1000, 3)).not.toEqual(run(blocks, 1000, 4))
  })
})
