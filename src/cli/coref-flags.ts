import {Flags} from '@oclif/core'
import {numberFlag} from './base.js'
import {SpanError} from '../core/stream/errors.js'
import {COREF_DEFAULTS as D, type CorefHeadConfig} from '../core/tasks/coref/config.js'
import type {ConllDoc} from '../core/tasks/coref/conll.js'

/** The coreference head's flags (`finetune coref`); defaults are Joshi et al.'s (experiments.conf `best`). */
export function corefHeadFlags() {
  return {
    head: Flags.string({
      description:
        'joshi: span vectors and coarse-to-fine pair scores (Joshi et al. 2019); s2e: start/end token vectors and bilinear scores, no span vectors (Kirstain et al. 2021)',
      options: ['joshi', 's2e'],
      default: D.head_type,
    }),
    'max-segment-len': Flags.integer({description: 'sub-tokens per segment, [CLS] and [SEP] included', default: D.max_segment_len, min: 8}),
    'max-training-segments': Flags.integer({
      description: 'segments of a document trained on at once (a random run of them)',
      default: D.max_training_segments,
      min: 1,
    }),
    'max-span-width': Flags.integer({description: 'longest candidate mention, in sub-tokens', default: D.max_span_width, min: 1}),
    'top-span-ratio': numberFlag('spans kept per sub-token after mention scoring', {default: D.top_span_ratio, min: 0.01, max: 1}),
    'max-top-antecedents': Flags.integer({description: 'antecedents kept per span by the coarse scores', default: D.max_top_antecedents, min: 1}),
    'ffnn-size': Flags.integer({description: 'hidden width of the mention and pair scorers', default: D.ffnn_size, min: 1}),
    'feature-size': Flags.integer({description: 'width of the width, distance, segment, speaker and genre embeddings', default: D.feature_size, min: 1}),
    'coref-depth': Flags.integer({description: '2: one higher-order refinement of the span vectors', default: D.coref_depth, min: 1, max: 3}),
    'coref-dropout': numberFlag("the head's dropout", {default: D.dropout, min: 0, max: 0.999}),
    'task-lr': numberFlag("the head's peak learning rate (the encoder's is --lr)", {default: 1e-4, min: 0}),
    singletons: Flags.boolean({
      description:
        'keep a span with no antecedent whose mention score is above 0 (default: on when over 10% of the training clusters are singletons, as in LitBank)',
      allowNo: true,
    }),
    'mention-loss': Flags.string({
      description:
        "fast-coref's mention loss added to the antecedent loss: summed BCE over the top spans, all candidates, or none (Joshi et al.) (default: topk with --singletons, else none)",
      options: ['none', 'topk', 'all'],
    }),
    'train-split': Flags.string({description: "--train's split when it is a folder: GUM's train/dev/test, LitBank's FOLD/NAME (0/train)"}),
    'dev-split': Flags.string({description: "--dev's split when it is a folder"}),
  }
}

/** The head config from the flags and the training documents (genres, speakers, singletons seen there); a resumed run's is the saved one. */
export function headFromFlags(f: Record<string, unknown>, train: ConllDoc[]): CorefHeadConfig {
  if (f.head !== null && typeof f.head === 'object') return {head_type: 'joshi', ...(f.head as CorefHeadConfig)} // --resume: the saved head (config.json's `head`)
  const n = (k: string) => f[k] as number
  const clusters = train.flatMap((d) => d.clusters)
  const single = clusters.filter((c) => c.length === 1).length
  const singletons = (f.singletons as boolean | undefined) ?? single > 0.1 * clusters.length
  const genres = train.every((d) => d.genre !== undefined) ? [...new Set(train.map((d) => d.genre as string))].sort() : []
  return {
    head_type: f.head as 'joshi' | 's2e',
    max_segment_len: n('max-segment-len'),
    max_training_segments: n('max-training-segments'),
    max_span_width: n('max-span-width'),
    top_span_ratio: n('top-span-ratio'),
    max_top_antecedents: n('max-top-antecedents'),
    ffnn_size: n('ffnn-size'),
    feature_size: n('feature-size'),
    coref_depth: n('coref-depth'),
    dropout: n('coref-dropout'),
    genres,
    speakers: train.some((d) => d.speaker !== undefined),
    singletons,
    mention_loss: (f['mention-loss'] as CorefHeadConfig['mention_loss'] | undefined) ?? (singletons ? 'topk' : 'none'),
  }
}

/** Each head flag and the key of the saved head config (config.json's `coref`, finetune_config.json's `head`) it sets. */
const HEAD_KEYS: Record<string, keyof CorefHeadConfig> = {
  head: 'head_type',
  'max-segment-len': 'max_segment_len',
  'max-training-segments': 'max_training_segments',
  'max-span-width': 'max_span_width',
  'top-span-ratio': 'top_span_ratio',
  'max-top-antecedents': 'max_top_antecedents',
  'ffnn-size': 'ffnn_size',
  'feature-size': 'feature_size',
  'coref-depth': 'coref_depth',
  'coref-dropout': 'dropout',
  singletons: 'singletons',
  'mention-loss': 'mention_loss',
}

/**
 * A resumed run's typed head flags, taken out of what openRun checks (which would compare
 * `--head` with the whole saved head object, and skip the other head flags, saved only inside it):
 * `parsed.raw` loses them; their values are returned for checkResumedHead. A new run: {}.
 */
export function takeTypedHeadFlags(parsed: {flags: Record<string, unknown>; raw: {type: string; flag?: string}[]}): Record<string, unknown> {
  if (parsed.flags.resume === undefined) return {}
  const typed: Record<string, unknown> = {}
  for (const t of parsed.raw) if (t.type === 'flag' && t.flag && t.flag in HEAD_KEYS) typed[t.flag] = parsed.flags[t.flag]
  parsed.raw = parsed.raw.filter((t) => !(t.type === 'flag' && t.flag && t.flag in HEAD_KEYS))
  return typed
}

/** A head flag typed on --resume must agree with the saved head, as every other typed flag (finetune-flags.ts settleResumed): else one line, exit 2. */
export function checkResumedHead(typed: Record<string, unknown>, saved: unknown, dir: string): void {
  if (saved === null || typeof saved !== 'object') return // no saved head: headFromFlags reads the flags
  const head = {head_type: 'joshi', ...(saved as CorefHeadConfig)} as Record<string, unknown>
  for (const [name, given] of Object.entries(typed)) {
    const was = head[HEAD_KEYS[name]]
    if (was !== undefined && JSON.stringify(given) !== JSON.stringify(was))
      throw new SpanError(
        `--${name} ${JSON.stringify(given)} differs from the run in ${dir} (${JSON.stringify(was)}); leave it out to continue the run as it was`,
        2,
      )
  }
}
