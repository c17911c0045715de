import type {MaskVocab, Scratch} from './mask-scratch.js'
import {coverWords, wordStart, type SpanLengthSampler} from './mask-span.js'
import type {Rng} from './rng.js'
import type {Tag} from './tags.js'

/** Origin of a masked position: RANDOM for a geometric (or whole-word) draw, else the tag's index + 1. */
export const RANDOM = 0

/** The draws of one block: coin outcomes while a tag was still open (docs/algorithms.md#tagged-masking). */
export interface DrawCounts {
  tagged: number
  random: number
}

/** What a tagged selection needs besides the block. */
export interface TaggedDraw {
  prob: number // --tagged-prob: the chance a draw takes a whole tagged span
  sampler: SpanLengthSampler | null // null: the rest are single whole words (--fill whole-word)
  origin: Int32Array // out: per position, RANDOM or tag index + 1 (valid where masked)
  draws: DrawCounts // out: added to
}

/**
 * SpanBERT's `NERSpanMaskingScheme.mask` (masking.py, facebookresearch/SpanBERT@5dd2131): until
 * `budget` tokens are masked, with probability `prob` take a tagged span uniformly among all of the
 * block's tags (`mask_entity`: from its start, cut at the budget; a tag already wholly masked is a
 * wasted draw, as there), else a random span as `--scheme span` draws it (`mask_random_span`: a
 * length, then an anchor; an anchor already masked is a wasted draw). Once every tag is wholly
 * masked only random draws remain, which is what the reference does then with a coin it ignores
 * (and where it never ends at prob 1). Marks scratch.masked and `d.origin`.
 */
export function selectTaggedMask(
  ids: readonly number[],
  vocab: MaskVocab,
  s: Scratch,
  n: number,
  budget: number,
  tags: readonly Tag[],
  d: TaggedDraw,
  rng: Rng,
): void {
  const {masked, cand} = s
  const maxMisses = 16 * n + 100 // guard against endless wasted draws, as in selectSpanMask
  let open = tags.length > 0
  let count = 0
  let misses = 0
  while (count < budget) {
    if (open && rng.float() < d.prob) {
      d.draws.tagged++
      const k = rng.int(tags.length)
      const before = count
      count = coverTag(ids, vocab, masked, tags[k], count, budget, d.origin, k + 1)
      if (count === before && !anyOpen(ids, vocab, masked, tags)) open = false
      continue
    }
    if (open) d.draws.random++
    const len = d.sampler ? d.sampler.sample(rng) : 1
    let k = rng.int(n)
    if (masked[cand[k]] === 1) {
      if (++misses <= maxMisses) continue
      while (masked[cand[k]] === 1) k = (k + 1) % n // count < budget ≤ n: one is unmasked
    }
    count = coverWords(ids, vocab, masked, wordStart(ids, vocab, cand[k]), len, count, budget, d.origin, RANDOM)
  }
}

/** Masks a tag's maskable positions left to right until the budget (reference `mask_entity`). */
function coverTag(
  ids: readonly number[],
  vocab: MaskVocab,
  masked: Uint8Array,
  tag: Tag,
  count: number,
  budget: number,
  origin: Int32Array,
  mark: number,
): number {
  for (let i = tag[0]; i <= tag[1] && count < budget; i++) {
    if (masked[i] === 1 || vocab.special[ids[i]] === 1) continue
    masked[i] = 1
    origin[i] = mark
    count++
  }
  return count
}

/** Whether some tag still has a maskable position left unmasked. */
function anyOpen(ids: readonly number[], vocab: MaskVocab, masked: Uint8Array, tags: readonly Tag[]): boolean {
  for (const [start, end] of tags) for (let i = start; i <= end; i++) if (masked[i] === 0 && vocab.special[ids[i]] === 0) return true
  return false
}
