import {describe, expect, it} from 'vitest'
import {maskBudget, tagFilter, type MaskOptions, type MaskResult} from '../../../src/core/data/mask.js'
import {Rng} from '../../../src/core/data/rng.js'
import {fakeTags} from './fake-tags.js'
import {checkExample, describeData, isWordEnd, isWordStart, maskable, masker, mv, vocab, wikiBlocks} from './helpers.js'

const ENTITY: MaskOptions = {scheme: 'entity', ratio: 0.15, p: 0.2, maxSpan: 10, taggedProb: 0.5}

/** The spans of a result as [start, end, decision, origin]. */
const spansOf = (r: MaskResult) =>
  Array.from({length: r.spans.length / 3}, (_, k) => [r.spans[3 * k], r.spans[3 * k + 1], r.spans[3 * k + 2], r.origins![k]] as const)

describe('tag filters', () => {
  it('entity takes every label but NP, noun-phrase only NP, --tag-labels exactly its list', () => {
    const e = tagFilter(ENTITY)
    expect([e('PER'), e('MISC'), e('NP')]).toEqual([true, true, false])
    const np = tagFilter({...ENTITY, scheme: 'noun-phrase'})
    expect([np('PER'), np('NP')]).toEqual([false, true])
    const only = tagFilter({...ENTITY, tagLabels: ['PER', 'LOC']})
    expect([only('PER'), only('LOC'), only('ORG'), only('NP')]).toEqual([true, true, false, false])
  })
})

describeData('entity / noun-phrase masking on tagged WikiText-2 blocks (NERSpanMaskingScheme)', () => {
  const blocks = wikiBlocks(256).map((b) => ({...b, tags: fakeTags(b.ids)}))

  it('masks exactly ceil(0.15·n) tokens a block; spans whole words; tagged spans lie inside a tag of their label', () => {
    const m = masker(ENTITY, blocks)
    const rng = new Rng(1)
    const bad: string[] = []
    let cutEnds = 0
    for (const b of blocks) {
      const r = m.mask(b.ids, rng, b.tags)
      checkExample(b.ids, r, bad)
      if (r.targets.length / 2 !== maskBudget(maskable(b.ids), 0.15)) bad.push(`budget ${r.targets.length / 2}`)
      for (const [s, e, , o] of spansOf(r)) {
        if (!isWordStart(b.ids, s)) bad.push(`span ${s}-${e} starts inside a word`)
        if (!isWordEnd(b.ids, e)) cutEnds++
        if (o === 'random') continue
        const tag = b.tags.find((t) => t[0] <= s && e <= t[1])
        if (!tag || tag[2] !== o || o !== 'ENT') bad.push(`span ${s}-${e} labelled ${o} is not inside an ENT tag`)
      }
    }
    expect(bad.slice(0, 5)).toEqual([])
    expect(cutEnds).toBeLessThanOrEqual(blocks.length) // only the draw the budget cuts may end inside a word
  })

  for (const prob of [0.5, 0.2, 0.8]) {
    it(`the coin takes a tagged span with probability --tagged-prob ${prob} (within 4σ), and spans say where they came from`, () => {
      const m = masker({...ENTITY, taggedProb: prob}, blocks)
      const rng = new Rng(11)
      let tagged = 0
      for (const b of blocks) tagged += spansOf(m.mask(b.ids, rng, b.tags)).filter((s) => s[3] !== 'random').length
      const {tagged: t, random: r} = m.draws
      const sigma = Math.sqrt((prob * (1 - prob)) / (t + r))
      expect(t + r).toBeGreaterThan(5000)
      expect(Math.abs(t / (t + r) - prob)).toBeLessThan(4 * sigma)
      expect(tagged).toBeGreaterThan(0)
    })
  }

  it('--tagged-prob 0: no tagged span; 1: every ENT tag wholly masked where the budget allows it', () => {
    const none = masker({...ENTITY, taggedProb: 0}, blocks)
    const all = masker({...ENTITY, taggedProb: 1}, blocks)
    const rng = new Rng(5)
    let checked = 0
    for (const b of blocks) {
      expect(spansOf(none.mask(b.ids, rng, b.tags)).every((s) => s[3] === 'random')).toBe(true)
      const ent = b.tags.filter((t) => t[2] === 'ENT')
      const tokens = ent.reduce((a, t) => a + t[1] - t[0] + 1, 0)
      if (tokens >= maskBudget(maskable(b.ids), 0.15)) continue
      const r = all.mask(b.ids, rng, b.tags)
      const targets = new Set(r.targets.filter((_, i) => i % 2 === 0))
      for (const t of ent) for (let i = t[0]; i <= t[1]; i++) expect(targets.has(i)).toBe(true)
      checked++
    }
    expect(checked).toBeGreaterThan(10)
  })

  it('noun-phrase masks NP tags only; the same seed gives the same masks, another seed others', () => {
    const opts = {...ENTITY, scheme: 'noun-phrase' as const}
    const run = (seed: number) => {
      const m = masker(opts, blocks)
      const rng = new Rng(seed)
      return blocks.map((b) => m.mask(b.ids, rng, b.tags))
    }
    const a = run(3)
    expect(run(3)).toEqual(a)
    expect(run(4)).not.toEqual(a)
    const labels = new Set(a.flatMap((r) => r.origins!))
    expect([...labels].sort()).toEqual(['NP', 'random'])
  })

  it('--fill whole-word: the other draws are single whole words (the paper), --fill span geometric spans (the reference)', () => {
    const meanWords = (fill: 'span' | 'whole-word') => {
      const m = masker({...ENTITY, fill, taggedProb: 0}, blocks)
      const rng = new Rng(9)
      let words = 0
      let spans = 0
      for (const b of blocks.slice(0, 300)) {
        for (const [s, e] of spansOf(m.mask(b.ids, rng, b.tags))) {
          for (let i = s; i <= e; i++) if (isWordStart(b.ids, i)) words++
          spans++
        }
      }
      return words / spans
    }
    expect(meanWords('whole-word')).toBeLessThan(1.3) // adjacent single words merge now and then
    expect(meanWords('span')).toBeGreaterThan(3) // 3.8 drawn, cut by the budget, merged
  })

  it("a block without tags (or none of the scheme's labels) is masked with random spans only, budget exact", () => {
    const m = masker(ENTITY, blocks)
    const rng = new Rng(2)
    for (const b of blocks.slice(0, 50)) {
      const r = m.mask(
        b.ids,
        rng,
        b.tags.filter((t) => t[2] === 'NP'),
      )
      expect(r.origins!.every((o) => o === 'random')).toBe(true)
      expect(r.targets.length / 2).toBe(maskBudget(maskable(b.ids), 0.15))
    }
    expect(mv.maskId).toBe(vocab.special.mask)
  })
})
