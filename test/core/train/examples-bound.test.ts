import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import type {MaskOptions} from '../../../src/core/data/mask.js'
import {ExampleMaker} from '../../../src/core/train/examples.js'
import {masker, mv, vocab} from '../data/helpers.js'

// On cuda, pre-training pads each batch's MLM and SBO targets to B·targetBound(T) rows (loop.ts
// padForGraphs), so that a graphed step replays: the bound must hold for every block the masker
// can be given, under every scheme, whatever the random draws.
const words = Array.from({length: vocab.tokens.length}, (_, id) => id).filter((id) => mv.special[id] === 0)

function blocks(n: number, rng: Rng): {ids: number[]}[] {
  return Array.from({length: n}, () => {
    const len = 2 + rng.int(40)
    const ids = Array.from({length: len}, (_, i) => (i === 0 ? vocab.special.cls : i === len - 1 ? vocab.special.sep : words[rng.int(words.length)]))
    if (len > 6 && rng.int(2) === 0) ids[Math.floor(len / 2)] = vocab.special.sep // a pair's middle [SEP]
    return {ids}
  })
}

describe('ExampleMaker.targetBound', () => {
  it('is never exceeded by a block’s MLM or SBO targets, and is met by a full block', () => {
    const data = blocks(300, new Rng(3))
    for (const scheme of ['span', 'subword', 'whole-word'] as const) {
      for (const ratio of [0.15, 0.3]) {
        const opts: MaskOptions = {scheme, ratio, p: 0.2, maxSpan: 10}
        const rules = {kind: 'blocks' as const, vocabSize: vocab.tokens.length, maxLen: 512, special: vocab.special, needNext: false}
        const maker = new ExampleMaker(rules, masker(opts, data), 1, 0, 'test')
        let met = 0
        data.forEach((b, i) => {
          const ex = maker.make({value: {ids: b.ids}, line: i + 1}, i, 0)
          const bound = maker.targetBound(b.ids.length)!
          expect(ex.targets.length, `${scheme} ${ratio} block ${i}`).toBeLessThanOrEqual(bound)
          if (ex.targets.length === bound) met++
        })
        expect(met, `${scheme} ${ratio}`).toBeGreaterThan(0)
      }
    }
  })

  it('is null for pre-masked data (no ratio to bound it)', () => {
    const rules = {kind: 'masked' as const, vocabSize: vocab.tokens.length, maxLen: 512, special: vocab.special, needNext: false}
    expect(new ExampleMaker(rules, null, 1, 0, 'test').targetBound(16)).toBeNull()
  })
})
