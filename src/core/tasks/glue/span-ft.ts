/**
 * Span Fine-tuning's settings for `span finetune glue` (Bao et al. §3–§5; docs/algorithms.md#span-fine-tuning):
 * the defaults of r (spans) and l (tokens per span), resolved per task, and the model it builds.
 *
 * Two sources disagree. The reference's scripts (BAORONGZHOU/span-fine-tuning @bca4358,
 * run_glue.sh and script.py) run max_chunk_number r = 48 to 128 by task and max_chunk_len
 * l = 16; the paper's §4.1 text says "r equals to 16, and ... l in {64, 128}". The default is the
 * reference's (`--span-ft-defaults reference`): it is the code the paper's numbers came from, and
 * the paper's r = 16 spans cannot hold a 128-token pair's segments while 64 or 128 tokens per
 * span exceeds any n-gram of ≤ 5 words. `--span-ft-defaults paper` gives r 16, l 64 (l 128 for
 * the sentence-pair tasks with long inputs: MNLI, QNLI, RTE); --max-spans/--max-span-tokens win over both.
 */
import {UsageError} from '../../stream/errors.js'
import {Rng} from '../../util/rng.js'
import {shuffleSpans} from '../../model/span-index.js'
import type {SpanFtConfig} from '../../model/span-ft.js'
import type {GlueFeature} from './features.js'
import type {GlueTaskName} from './tasks.js'

/** max_chunk_number per task: run_glue.sh (QNLI, MNLI, QQP, SST-2) and script.py's feature files (the rest). */
export const REFERENCE_MAX_SPANS: Record<GlueTaskName, number> = {
  CoLA: 48,
  'SST-2': 64,
  MRPC: 64,
  'STS-B': 64,
  QQP: 100,
  MNLI: 128,
  QNLI: 128,
  RTE: 128,
  WNLI: 48,
}
/** max_chunk_len of every run in run_glue.sh. */
export const REFERENCE_MAX_SPAN_TOKENS = 16

/** §4.1's r = 16 and l ∈ {64, 128} (128 where the inputs are long pairs). */
export function paperSpanDefaults(task: GlueTaskName): {r: number; l: number} {
  return {r: 16, l: ['MNLI', 'QNLI', 'RTE'].includes(task) ? 128 : 64}
}

/** r and l by source of defaults, for one task. */
export interface SpanDefaults {
  reference: {r: number; l: number}
  paper: {r: number; l: number}
}

/** A GLUE task's defaults (above). */
export const glueSpanDefaults = (task: GlueTaskName): SpanDefaults => ({
  reference: {r: REFERENCE_MAX_SPANS[task], l: REFERENCE_MAX_SPAN_TOKENS},
  paper: paperSpanDefaults(task),
})

/** The settings of a sentence-level span-ft run, whatever the task (glue, nli). */
export interface SpanFtOptions {
  defaults: 'reference' | 'paper'
  maxSpans?: number
  maxSpanTokens?: number
  padding: 0 | 1
  cls: 'raw' | 'pooled' | 'none'
  segmentation: 'dict' | 'random' | 'none'
  maxLen: number
  truncation?: 'bert' | 'reference'
}

export interface GlueSpanFtOptions extends SpanFtOptions {
  task: GlueTaskName
}

/** The span_ft of config.json for a GLUE task. */
export const glueSpanFt = (o: GlueSpanFtOptions): SpanFtConfig => spanFtConfig(o, glueSpanDefaults(o.task))

/**
 * The span_ft of config.json, r and l from `base` unless given. `none` (the "+ CNN" ablation,
 * §5.1) is one span of every token: r = 1, l = --max-len, so both convolutions run along the
 * whole sequence before one max-pool.
 */
export function spanFtConfig(o: SpanFtOptions, base: SpanDefaults): SpanFtConfig {
  const d = base[o.defaults]
  const none = o.segmentation === 'none'
  const r = none ? 1 : (o.maxSpans ?? d.r)
  const l = none ? o.maxLen : (o.maxSpanTokens ?? d.l)
  const k = 3 - 2 * o.padding // positions the kernel needs with this padding
  if (none && l < 2 * k - 1) throw new UsageError(`--segmentation none needs --max-len ≥ ${2 * k - 1} with --span-ft-padding ${o.padding}`)
  if (!none && (r < Math.max(k, 4) || l < k))
    throw new UsageError(`--max-spans must be ≥ ${Math.max(k, 4)} and --max-span-tokens ≥ ${k} with --span-ft-padding ${o.padding}`)
  const truncation = o.truncation ?? 'bert'
  return {max_spans: r, max_span_tokens: l, padding: o.padding, pool: 'reference', cls: o.cls, segmentation: o.segmentation, level: 'sentence', truncation}
}

/**
 * The random segmentation of the ablation as the reference runs it (run_classifier_direct.py
 * --do_random → do_random_chunk on the training features only; dev and test keep the
 * dictionary's): each training example's span lengths shuffled once, seeded.
 */
export function shuffleTrainSpans(features: GlueFeature[], seed: number): GlueFeature[] {
  return shuffleSpans(features, new Rng(seed))
}
