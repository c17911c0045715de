import type {MaskVocab, Scratch} from './mask-scratch.js'
import type {Rng} from './rng.js'
import {spanLengthDistribution} from './spanlen.js'

/**
 * Draws span lengths ℓ ∈ 1..maxSpan (in words) from the clipped geometric distribution of
 * SpanBERT §3.1 (reference `PairWithSpanMaskingScheme.len_distrib`, `np.random.choice(lens, p=…)`).
 */
export class SpanLengthSampler {
  readonly cdf: Float64Array

  constructor(p: number, maxSpan: number) {
    const dist = spanLengthDistribution(p, maxSpan)
    this.cdf = new Float64Array(dist.length)
    let acc = 0
    dist.forEach((q, i) => {
      acc += q
      this.cdf[i] = acc
    })
  }

  sample(rng: Rng): number {
    return rng.fromCdf(this.cdf) + 1
  }
}

/**
 * Span selection of SpanBERT §3.1 (reference `PairWithSpanMaskingScheme.mask`): until `budget`
 * tokens are masked, draw a length ℓ, then an anchor uniform over the n maskable positions; an
 * anchor already masked is thrown away with its length (both are redrawn); otherwise go back to
 * the anchor's word start and cover whole words until ℓ words are covered, stopping the moment
 * the budget is reached. Marks scratch.masked; the merged spans are its maximal runs.
 * Special positions bound words and spans: a span never crosses one.
 */
export function selectSpanMask(
  ids: readonly number[],
  vocab: MaskVocab,
  s: Scratch,
  n: number,
  budget: number,
  sampler: SpanLengthSampler,
  rng: Rng,
): void {
  const {masked, cand} = s
  const maxMisses = 16 * n + 100 // guard: past this many redraws, take the next unmasked position
  let count = 0
  let misses = 0
  while (count < budget) {
    const len = sampler.sample(rng)
    let k = rng.int(n)
    if (masked[cand[k]] === 1) {
      if (++misses <= maxMisses) continue
      while (masked[cand[k]] === 1) k = (k + 1) % n // count < budget ≤ n: one is unmasked
    }
    count = coverWords(ids, vocab, masked, wordStart(ids, vocab, cand[k]), len, count, budget)
  }
}

/** Back from `i` to the first piece of its word (reference `get_word_start`). */
export function wordStart(ids: readonly number[], vocab: MaskVocab, i: number): number {
  while (i > 0 && vocab.cont[ids[i]] === 1 && vocab.special[ids[i - 1]] === 0) i--
  return i
}

/**
 * Marks whole words from `start` until `words` are covered or `count` reaches `budget`; with
 * `origin`, each newly masked position also gets `mark` there (the tagged schemes, mask-tagged.ts).
 */
export function coverWords(
  ids: readonly number[],
  vocab: MaskVocab,
  masked: Uint8Array,
  start: number,
  words: number,
  count: number,
  budget: number,
  origin?: Int32Array,
  mark = 0,
): number {
  const {cont, special} = vocab
  let i = start
  for (let w = 0; w < words && count < budget && i < ids.length && special[ids[i]] === 0; w++) {
    do {
      if (masked[i] === 0) {
        masked[i] = 1
        if (origin) origin[i] = mark
        count++
      }
      i++
    } while (count < budget && i < ids.length && special[ids[i]] === 0 && cont[ids[i]] === 1)
  }
  return count
}
