import type {SpecialIds} from '../stream/header.js'
import {SpanLengthSampler, selectSpanMask} from './mask-span.js'
import {selectSubwordMask, selectWholeWordMask} from './mask-bert.js'
import {type MaskVocab, Scratch} from './mask-scratch.js'
import {selectTaggedMask, type DrawCounts} from './mask-tagged.js'
import type {Rng} from './rng.js'
import type {Tag} from './tags.js'
import type {Unigram} from './unigram.js'

export {type MaskVocab, Scratch} from './mask-scratch.js'

export type MaskScheme = 'span' | 'subword' | 'whole-word' | 'entity' | 'noun-phrase'
export const MASK_SCHEMES: readonly MaskScheme[] = ['span', 'subword', 'whole-word', 'entity', 'noun-phrase']
/** The schemes that read tags (docs/algorithms.md#tagged-masking). */
export const TAGGED_SCHEMES: readonly MaskScheme[] = ['entity', 'noun-phrase']
/** The tagged schemes' other draws (`--fill`): geometric spans (the reference code) or single whole words (the paper). */
export const TAG_FILLS = ['span', 'whole-word'] as const

/** The label `span tag` gives noun-phrase chunks: `noun-phrase` takes these tags, `entity` every other. */
export const NP_LABEL = 'NP'

/** How a masked span's tokens are replaced (docs/algorithms.md#span-masking step 4). */
export type Decision = 'mask' | 'random' | 'keep'
export const DECISIONS: readonly Decision[] = ['mask', 'random', 'keep']

export interface MaskOptions {
  scheme: MaskScheme
  ratio: number // share of a block's maskable tokens to mask (0.15)
  p: number // geometric span-length parameter (span scheme)
  maxSpan: number // span lengths are clipped here (span scheme)
  taggedProb?: number // entity, noun-phrase: the chance a draw takes a tagged span (0.5)
  tagLabels?: readonly string[] // entity, noun-phrase: the labels that count (default: by scheme)
  fill?: 'span' | 'whole-word' // entity, noun-phrase: the other draws (span: the reference; whole-word: the paper)
}

/** Whether a tag's label counts under a tagged scheme: --tag-labels, else NP for noun-phrase and all but NP for entity. */
export function tagFilter(opts: MaskOptions): (label: string) => boolean {
  if (opts.tagLabels && opts.tagLabels.length > 0) {
    const keep = new Set(opts.tagLabels)
    return (l) => keep.has(l)
  }
  return opts.scheme === 'noun-phrase' ? (l) => l === NP_LABEL : (l) => l !== NP_LABEL
}

/** Builds the per-id tables from a vocabulary's strings and its special ids. */
export function maskVocab(tokens: readonly string[], special: SpecialIds): MaskVocab {
  const isSpecial = new Uint8Array(tokens.length)
  const cont = new Uint8Array(tokens.length)
  for (const id of [special.pad, special.unk, special.cls, special.sep, special.mask]) isSpecial[id] = 1
  for (let id = 0; id < tokens.length; id++) {
    if (tokens[id].startsWith('##')) cont[id] = 1
    else if (/^\[(unused\d+|[A-Z]+)\]$/.test(tokens[id])) isSpecial[id] = 1 // [unused0], [BOS], …: never real text
  }
  return {special: isSpecial, cont, maskId: special.mask}
}

/**
 * Budget = ceil(ratio·n) (docs/algorithms.md#span-masking step 1). ratio·n is rounded first when it is within float
 * error of an integer: 0.15·100 is 15.000000000000002 in binary floating point, and that is
 * 15 tokens, not 16.
 */
export function maskBudget(n: number, ratio: number): number {
  const x = ratio * n
  const r = Math.round(x)
  return Math.min(n, Math.abs(x - r) <= 1e-9 * Math.max(1, x) ? r : Math.ceil(x))
}

/** A block after masking; spans are [start, end] inclusive, positions index `ids`. */
export interface MaskResult {
  ids: number[] // the input after masking (a new array)
  targets: number[] // flat: pos0, original0, pos1, original1, … in position order
  spans: number[] // flat: start, end, decision index into DECISIONS, …
  origins?: string[] // tagged schemes: per span, the tag's label or "random" (docs/formats.md#masked-examples)
}

/**
 * Masks one block under a scheme. `ids` may contain special tokens anywhere ([CLS], the [SEP]s
 * of a pair, [UNK]): they are never masked and do not count towards n.
 */
export class Masker {
  private readonly sampler: SpanLengthSampler
  private readonly scratch = new Scratch()
  private readonly keepTag: (label: string) => boolean
  /** Tagged schemes: the coin's outcomes so far, over every block masked (inspect and tests read them). */
  readonly draws: DrawCounts = {tagged: 0, random: 0}

  constructor(readonly opts: MaskOptions, readonly vocab: MaskVocab, readonly unigram: Unigram) {
    this.sampler = new SpanLengthSampler(opts.p, opts.maxSpan)
    this.keepTag = tagFilter(opts)
  }

  /** `tags`: the block's tags (docs/formats.md#tags), read by the tagged schemes only. */
  mask(ids: readonly number[], rng: Rng, tags: readonly Tag[] = []): MaskResult {
    const s = this.scratch
    s.fit(ids.length)
    const n = this.candidates(ids)
    const budget = maskBudget(n, this.opts.ratio)
    if (TAGGED_SCHEMES.includes(this.opts.scheme)) return this.maskTagged(ids, rng, n, budget, tags)
    if (this.opts.scheme === 'span') {
      selectSpanMask(ids, this.vocab, s, n, budget, this.sampler, rng)
      return this.replace(ids, true, rng)
    }
    if (this.opts.scheme === 'subword') selectSubwordMask(s, n, budget, rng)
    else selectWholeWordMask(ids, this.vocab, s, n, budget, rng)
    return this.replace(ids, false, rng)
  }

  /** entity, noun-phrase: NERSpanMaskingScheme over the tags whose label counts; spans labelled by origin. */
  private maskTagged(ids: readonly number[], rng: Rng, n: number, budget: number, all: readonly Tag[]): MaskResult {
    const tags = all.filter((t) => this.keepTag(t[2]))
    const sampler = this.opts.fill === 'whole-word' ? null : this.sampler
    const d = {prob: this.opts.taggedProb ?? 0.5, sampler, origin: this.scratch.origin, draws: this.draws}
    selectTaggedMask(ids, this.vocab, this.scratch, n, budget, tags, d, rng)
    const res = this.replace(ids, true, rng, this.scratch.origin)
    res.origins = res.origins?.map((o) => (o === '0' ? 'random' : tags[Number(o) - 1][2]))
    return res
  }

  /** Fills scratch.cand with the maskable positions; returns their number. */
  private candidates(ids: readonly number[]): number {
    const special = this.vocab.special
    const cand = this.scratch.cand
    let n = 0
    for (let i = 0; i < ids.length; i++) if (special[ids[i]] === 0) cand[n++] = i
    return n
  }

  /**
   * Applies 80/10/10 to the masked positions, left to right: once per maximal run of masked
   * positions (the merged spans, SpanBERT §3.1 / reference `span_masking`), or once per token
   * (BERT's `create_masked_lm_predictions`). Every masked position becomes a target. With
   * `origin` (tagged schemes) a run is also cut where the origin changes, so each span has one.
   */
  private replace(ids: readonly number[], perSpan: boolean, rng: Rng, origin?: Int32Array): MaskResult {
    const masked = this.scratch.masked
    const out = ids.slice()
    const targets: number[] = []
    const spans: number[] = []
    const origins: string[] = []
    let i = 0
    while (i < ids.length) {
      if (masked[i] === 0) {
        i++
        continue
      }
      let end = i
      if (perSpan) while (end + 1 < ids.length && masked[end + 1] === 1 && (!origin || origin[end + 1] === origin[i])) end++
      if (origin) origins.push(String(origin[i]))
      const d = decide(rng)
      for (let j = i; j <= end; j++) {
        targets.push(j, ids[j])
        if (d === 0) out[j] = this.vocab.maskId
        else if (d === 1) out[j] = this.unigram.sample(rng)
      }
      spans.push(i, end, d)
      i = end + 1
    }
    return origin ? {ids: out, targets, spans, origins} : {ids: out, targets, spans}
  }
}

/** 0 = [MASK] with probability 0.8, 1 = random token 0.1, 2 = kept 0.1 (BERT §3.1). */
export function decide(rng: Rng): number {
  const r = rng.float()
  return r < 0.8 ? 0 : r < 0.9 ? 1 : 2
}
