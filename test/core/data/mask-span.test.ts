import {describe, expect, it} from 'vitest'
import {maskBudget, type MaskOptions} from '../../../src/core/data/mask.js'
import {SpanLengthSampler} from '../../../src/core/data/mask-span.js'
import {Rng} from '../../../src/core/data/rng.js'
import {checkExample, describeData, isWordEnd, isWordStart, maskable, masker, vocab, wikiBlocks} from './helpers.js'

const SPAN: MaskOptions = {scheme: 'span', ratio: 0.15, p: 0.2, maxSpan: 10}

describe('span length sampler (SpanBERT §3.1)', () => {
  for (const [p, mean] of [
    [0.2, 3.8],
    [0.3, 3.04],
  ]) {
    it(`averages ${mean} words at p = ${p} over 100k draws, within 1..10`, () => {
      const sampler = new SpanLengthSampler(p, 10)
      const rng = new Rng(7)
      let sum = 0
      let max = 0
      let min = Infinity
      for (let i = 0; i < 100_000; i++) {
        const l = sampler.sample(rng)
        sum += l
        max = Math.max(max, l)
        min = Math.min(min, l)
      }
      expect(Math.abs(sum / 100_000 - mean)).toBeLessThan(0.05)
      expect(max).toBe(10)
      expect(min).toBe(1)
    })
  }

  it('follows the clipped geometric shape: P(1)/P(2) = 1/(1−p)', () => {
    const sampler = new SpanLengthSampler(0.2, 10)
    const rng = new Rng(3)
    const hist = new Array(11).fill(0)
    for (let i = 0; i < 100_000; i++) hist[sampler.sample(rng)]++
    expect(hist[1] / hist[2]).toBeGreaterThan(1.2)
    expect(hist[1] / hist[2]).toBeLessThan(1.3)
    expect(hist[0]).toBe(0)
  })
})

describe('maskBudget', () => {
  it('is ceil(ratio·n), without float artefacts', () => {
    expect(maskBudget(100, 0.15)).toBe(15) // 0.15·100 = 15.000000000000002 in floating point
    expect(maskBudget(510, 0.15)).toBe(77)
    expect(maskBudget(126, 0.15)).toBe(19)
    expect(maskBudget(1, 0.15)).toBe(1)
    expect(maskBudget(0, 0.15)).toBe(0)
    expect(maskBudget(7, 1)).toBe(7)
  })

  it('never decreases with n (pre-training on cuda pads a batch of T tokens to B·maskBudget(T) targets)', () => {
    for (const ratio of [0.1, 0.15, 0.2, 0.3, 1 / 3, 0.5, 1])
      for (let n = 0; n < 1024; n++) expect(maskBudget(n + 1, ratio), `${ratio} ${n}`).toBeGreaterThanOrEqual(maskBudget(n, ratio))
  })
})

describeData('span masking on WikiText-2 blocks', () => {
  const blocks = [...wikiBlocks(512), ...wikiBlocks(128)]
  const m = masker(SPAN, blocks)

  it('masks exactly ceil(0.15·n) tokens per block, in merged spans with one 80/10/10 decision each', () => {
    const rng = new Rng(11)
    const counts = [0, 0, 0]
    let spans = 0
    let cutSpans = 0
    const bad: string[] = []
    for (const b of blocks) {
      const res = m.mask(b.ids, rng)
      const n = maskable(b.ids)
      expect(n).toBe(b.ids.length - 2)
      expect(res.targets.length / 2).toBe(maskBudget(n, 0.15))
      for (const d of checkExample(b.ids, res, bad)) counts[d]++
      for (let k = 0; k < res.spans.length; k += 3) {
        const [s, e] = [res.spans[k], res.spans[k + 1]]
        if (k > 0 && s <= res.spans[k - 2] + 1) bad.push(`spans touch at ${s}`) // merged: no two touch
        if (!isWordStart(b.ids, s)) bad.push(`span starts inside a word at ${s}`)
        if (!isWordEnd(b.ids, e)) cutSpans++
      }
      spans += res.spans.length / 3
    }
    expect(bad.slice(0, 5)).toEqual([])
    expect(cutSpans).toBeLessThanOrEqual(blocks.length) // only the budget cut ends inside a word
    expect(spans).toBeGreaterThan(15_000)
    const tol = 4 * Math.sqrt((0.8 * 0.2) / spans) // 4 standard errors
    expect(Math.abs(counts[0] / spans - 0.8)).toBeLessThan(tol)
    expect(Math.abs(counts[1] / spans - 0.1)).toBeLessThan(tol)
    expect(Math.abs(counts[2] / spans - 0.1)).toBeLessThan(tol)
  })

  it('gives output spans longer on average than the sampled 3.8 words only through merging', () => {
    const rng = new Rng(5)
    let words = 0
    let spans = 0
    for (const b of blocks.slice(0, 625)) {
      const res = m.mask(b.ids, rng)
      for (let k = 0; k < res.spans.length; k += 3) {
        for (let i = res.spans[k]; i <= res.spans[k + 1]; i++) if (isWordStart(b.ids, i)) words++
        spans++
      }
    }
    // budget cuts shorten spans, merging lengthens them; the paper's figure 2 mean is 3.8
    expect(words / spans).toBeGreaterThan(3)
    expect(words / spans).toBeLessThan(5)
  })

  it('draws random replacements from the unigram distribution of the data', () => {
    const rng = new Rng(13)
    const hits = new Map<number, number>()
    let total = 0
    for (const b of blocks) {
      const res = m.mask(b.ids, rng)
      for (let k = 0; k < res.spans.length; k += 3) {
        if (res.spans[k + 2] !== 1) continue
        for (let i = res.spans[k]; i <= res.spans[k + 1]; i++) hits.set(res.ids[i], (hits.get(res.ids[i]) ?? 0) + 1)
        total += res.spans[k + 1] - res.spans[k] + 1
      }
    }
    const common = ['the', ',', '.'].reduce((s, t) => s + (hits.get(vocab.ids.get(t)!) ?? 0), 0)
    expect(total).toBeGreaterThan(3000)
    expect(common / total).toBeGreaterThan(0.08) // about 14% of WikiText tokens; a uniform draw would give 0.01%
  })

  it('is reproducible: same seed same result, another seed another', () => {
    const run = (seed: number) => {
      const rng = new Rng(seed)
      return JSON.stringify(blocks.slice(0, 50).map((b) => m.mask(b.ids, rng)))
    }
    expect(run(1)).toBe(run(1))
    expect(run(1)).not.toBe(run(2))
  })
})

describeData('span masking edge cases', () => {
  const {cls, sep, unk} = vocab.special
  const word = vocab.ids.get('the')!
  const piece = vocab.ids.get('##s')!
  const m = masker(SPAN, [{ids: [word, piece]}])

  it('masks nothing in a block of special tokens only', () => {
    const res = m.mask([cls, sep], new Rng(1))
    expect(res.targets).toEqual([])
    expect(res.spans).toEqual([])
  })

  it('terminates at ratio 1 (every anchor redraw hits a masked token eventually)', () => {
    const ids = [cls, ...Array.from({length: 300}, (_, i) => (i % 3 === 2 ? piece : word)), sep]
    const res = masker({...SPAN, ratio: 1}, [{ids}]).mask(ids, new Rng(2))
    expect(res.targets.length / 2).toBe(300)
    expect(res.spans.length).toBe(3) // one merged span
  })

  it('falls back to the next unmasked position when redraws keep hitting masked ones', () => {
    const stuck = {int: () => 0, float: () => 0, next: () => 0, fromCdf: () => 0} as unknown as Rng // every anchor is position 1
    const ids = [cls, ...Array(40).fill(word), sep]
    const res = m.mask(ids, stuck)
    expect(res.targets.length / 2).toBe(6) // ceil(0.15·40), spans of one word from anchors 1, 2, 3, …
    expect(res.spans).toEqual([1, 6, 0])
  })

  it('never masks or crosses the middle [SEP] of a pair, nor an [UNK]', () => {
    const ids = [cls, ...Array(20).fill(word), unk, ...Array(20).fill(word), sep, ...Array(30).fill(word), sep]
    const rng = new Rng(9)
    for (let t = 0; t < 200; t++) {
      const res = masker({...SPAN, ratio: 0.5}, [{ids}]).mask(ids, rng)
      expect(res.targets.length / 2).toBe(maskBudget(70, 0.5))
      const bad: string[] = []
      checkExample(ids, res, bad)
      expect(bad).toEqual([])
    }
  })

  it('starts a span at the word start of an anchor inside a word', () => {
    const ids = [cls, word, piece, piece, piece, piece, piece, piece, piece, piece, piece, sep] // one word of 10 pieces
    const res = m.mask(ids, new Rng(4)) // budget 2: the first two pieces of the word
    expect(res.spans.slice(0, 2)).toEqual([1, 2])
  })
})
