import {expect, it} from 'vitest'
import {maskBudget, type MaskOptions} from '../../../src/core/data/mask.js'
import {Rng} from '../../../src/core/data/rng.js'
import {checkExample, describeData, hasData, isWordEnd, isWordStart, maskable, masker, vocab, wikiBlocks} from './helpers.js'

const blocks = hasData ? [...wikiBlocks(512), ...wikiBlocks(128)] : []
const opts = (scheme: MaskOptions['scheme']): MaskOptions => ({scheme, ratio: 0.15, p: 0.2, maxSpan: 10})

/** Masks every block; checks the shared promises; returns the per-token decision counts. */
function maskAll(scheme: MaskOptions['scheme'], seed: number, each: (ids: number[], pos: number[]) => void): number[] {
  const m = masker(opts(scheme), blocks)
  const rng = new Rng(seed)
  const counts = [0, 0, 0]
  const bad: string[] = []
  for (const b of blocks) {
    const res = m.mask(b.ids, rng)
    expect(res.targets.length / 2).toBe(maskBudget(maskable(b.ids), 0.15))
    for (const d of checkExample(b.ids, res, bad)) counts[d]++
    for (let k = 0; k < res.spans.length; k += 3) if (res.spans[k] !== res.spans[k + 1]) bad.push('a span of more than one token')
    each(b.ids, res.targets.filter((_, i) => i % 2 === 0))
  }
  expect(bad.slice(0, 5)).toEqual([])
  return counts
}

function expectProportions(counts: number[]): void {
  const total = counts[0] + counts[1] + counts[2]
  expect(total).toBeGreaterThan(30_000)
  const tol = 4 * Math.sqrt((0.8 * 0.2) / total)
  expect(Math.abs(counts[0] / total - 0.8)).toBeLessThan(tol)
  expect(Math.abs(counts[1] / total - 0.1)).toBeLessThan(tol)
  expect(Math.abs(counts[2] / total - 0.1)).toBeLessThan(tol)
}

describeData('subword masking (BERT)', () => {
  it('masks exactly ceil(0.15·n) tokens, each its own span, 80/10/10 per token', () => {
    let adjacent = 0
    const counts = maskAll('subword', 1, (_ids, pos) => {
      for (let i = 1; i < pos.length; i++) if (pos[i] === pos[i - 1] + 1) adjacent++
    })
    expectProportions(counts)
    expect(adjacent).toBeGreaterThan(0) // positions are independent: neighbours happen and stay separate spans
  })

  it('spreads positions uniformly over the block', () => {
    const ids = [vocab.special.cls, ...Array(100).fill(vocab.ids.get('the')!), vocab.special.sep]
    const m = masker(opts('subword'), [{ids}])
    const rng = new Rng(2)
    const hits = new Array(102).fill(0)
    for (let t = 0; t < 4000; t++) {
      const {targets} = m.mask(ids, rng)
      for (let i = 0; i < targets.length; i += 2) hits[targets[i]]++
    }
    expect(hits[0]).toBe(0)
    expect(hits[101]).toBe(0)
    const inner = hits.slice(1, 101)
    expect(Math.min(...inner)).toBeGreaterThan(0)
    expect(Math.max(...inner) / Math.min(...inner)).toBeLessThan(2)
  })
})

describeData('whole-word masking', () => {
  it('masks exactly ceil(0.15·n) tokens covering whole words, but for one cut word per block', () => {
    let partial = 0
    const counts = maskAll('whole-word', 3, (ids, pos) => {
      const set = new Set(pos)
      let cut = 0
      for (const p of pos) {
        if (isWordStart(ids, p) && !wholeWordIn(ids, p, set)) cut++
        if (!isWordStart(ids, p) && !set.has(p - 1)) cut += 10 // a word's tail without its head: never
      }
      expect(cut).toBeLessThanOrEqual(1)
      partial += cut
    })
    expectProportions(counts)
    expect(partial).toBeGreaterThan(0) // the budget does cut words sometimes
  })

  it('is reproducible', () => {
    const m = masker(opts('whole-word'), blocks)
    const run = (seed: number) => JSON.stringify(blocks.slice(0, 40).map((b) => m.mask(b.ids, new Rng(seed))))
    expect(run(5)).toBe(run(5))
    expect(run(5)).not.toBe(run(6))
  })
})

/** Whether the word starting at `p` is masked to its end. */
function wholeWordIn(ids: number[], p: number, set: Set<number>): boolean {
  for (let i = p; ; i++) {
    if (!set.has(i)) return false
    if (isWordEnd(ids, i)) return true
  }
}
