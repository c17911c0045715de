import {DECISIONS, type Masker, maskBudget} from '../data/mask.js'
import {toBlockRecord} from '../data/mask-io.js'
import {type MaskedExample, toMaskedExample} from '../data/masked.js'
import {errorAt} from '../stream/errors.js'
import type {SpecialIds} from '../stream/header.js'
import type {Rec} from '../stream/ndjson.js'
import {deriveRng} from './sampler.js'

/** What pre-training reads: masked examples (span mask), or blocks it masks itself. */
export type DataKind = 'masked' | 'blocks'

/** What every example must satisfy to fit the model. */
export interface DataRules {
  kind: DataKind
  vocabSize: number // the model's vocab_size
  maxLen: number // --max-len, at most the model's max_position_embeddings
  special: SpecialIds
  needNext: boolean // the nsp objective is on
}

/** The kind of a headerless stream, from its first record. */
export function guessKind(first: Rec): DataKind {
  return 'targets' in first.value || 'spans' in first.value ? 'masked' : 'blocks'
}

/** Validates one record against the rules; returns its ids (counted for the unigram table). */
export function checkRecord(rec: Rec, rules: DataRules, source: string): number[] {
  const ex = rules.kind === 'masked'
    ? toMaskedExample(rec, rules.vocabSize, source)
    : toBlockRecord(rec, rules.vocabSize, rules.special.cls, rules.special.sep, source)
  if (ex.ids.length > rules.maxLen) {
    throw errorAt(source, rec.line, `a sequence of ${ex.ids.length} tokens is longer than the ${rules.maxLen} the model takes (--max-len, max_position_embeddings)`)
  }
  if (rules.needNext && typeof ex.next !== 'boolean') {
    throw errorAt(source, rec.line, 'the nsp objective needs examples with a "next" label (span block --pairs)')
  }
  return ex.ids
}

/**
 * Turns records into masked examples. Blocks are masked here with a generator derived from
 * (seed, stream, epoch, index): a fresh mask every epoch, as SpanBERT's dynamic masking does
 * (SpanBERT §4.2, following RoBERTa), yet the same mask for the same (epoch, index) on a resume.
 */
export class ExampleMaker {
  constructor(
    private readonly rules: DataRules,
    private readonly masker: Masker | null,
    private readonly seed: number,
    private readonly stream: number,
    private readonly source: string,
  ) {}

  /**
   * At most how many MLM targets a block of at most T tokens gets (null: unknown, pre-masked
   * data): the masker masks exactly maskBudget(n) = ceil(ratio·n) of its n maskable tokens, n ≤
   * T − 2 (a block starts with [CLS] and ends with [SEP], never masked: toBlockRecord checks), and
   * maskBudget never decreases with n; every SBO target is one of the MLM targets. The memory
   * plan budgets the same ceil(ratio·(T − 2)) rows a row.
   */
  targetBound(T: number): number | null {
    return this.rules.kind === 'blocks' && this.masker ? maskBudget(Math.max(0, T - 2), this.masker.opts.ratio) : null
  }

  make(rec: Rec, index: number, epoch: number): MaskedExample {
    const r = this.rules
    if (r.kind === 'masked') return toMaskedExample(rec, r.vocabSize, this.source)
    const block = toBlockRecord(rec, r.vocabSize, r.special.cls, r.special.sep, this.source)
    if (!this.masker) throw new Error('blocks need a masker')
    const res = this.masker.mask(block.ids, deriveRng(this.seed, this.stream, epoch, index), block.tags)
    const targets: [number, number][] = []
    for (let i = 0; i < res.targets.length; i += 2) targets.push([res.targets[i], res.targets[i + 1]])
    const spans: [number, number, string][] = []
    for (let i = 0; i < res.spans.length; i += 3) spans.push([res.spans[i], res.spans[i + 1], DECISIONS[res.spans[i + 2]]])
    return {ids: res.ids, targets, spans, segments: block.segments, next: block.next}
  }
}
