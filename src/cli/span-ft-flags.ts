import {Flags} from '@oclif/core'
import {resolve} from 'node:path'
import type {SpanFtConfig} from '../core/model/span-ft.js'
import {UsageError} from '../core/stream/errors.js'
import {openSource} from '../core/stream/lines.js'
import {type SpanDefaults, spanFtConfig} from '../core/tasks/glue/span-ft.js'
import {SPAN_FT_KEYS, type SpanFtRunConfig} from '../core/tasks/glue/train.js'
import {type NgramDict, readNgramDict} from '../core/text/ngrams.js'

const DICT = "n-gram dictionary for --span-ft: ours (span segment-ngrams --build), the reference's JSON {ngram: count}, or ngram<TAB>count lines"

/** The Span Fine-tuning flags of `finetune glue` and `finetune nli` (src/core/tasks/glue/span-ft.ts has the defaults and why). */
export function spanFtFlags() {
  return {
    'span-ft': Flags.boolean({description: 'Span Fine-tuning (Bao et al. §3): the span CNN beside [CLS]'}),
    dict: Flags.string({description: DICT}),
    'span-ft-defaults': Flags.string({
      description:
        "where r and l default from: 'reference' (run_glue.sh/script.py: r 48–128 by task, l 16; the default, the code behind the paper's numbers) or 'paper' (§4.1's text: r 16, l 64/128)",
      options: ['reference', 'paper'],
      default: 'reference',
    }),
    'max-spans': Flags.integer({description: 'r: spans per example, [CLS] and [SEP]s included (default: see --span-ft-defaults)', min: 3}),
    'max-span-tokens': Flags.integer({description: 'l: tokens per span (default: see --span-ft-defaults)', min: 1}),
    'span-ft-padding': Flags.string({description: "Conv1d zero padding: 0 as the reference's CNN_conv1d, or 1", options: ['0', '1'], default: '0'}),
    'span-ft-cls': Flags.string({
      description:
        "what s is concatenated with: [CLS]'s raw vector t₁ (§3.2), the pooler's output (the reference with --do_concat), or none (its run_glue.sh: s alone)",
      options: ['raw', 'pooled', 'none'],
      default: 'raw',
    }),
    'span-ft-truncation': Flags.string({
      description:
        "how an input is cut to --max-len: BERT's truncate_seq_pair (as plain runs, the default), or the reference's per-sentence budgets (whole spans, ⌊max-len/2⌋ − 5 tokens and ⌊r/2⌋ − 3 spans per sentence of a pair)",
      options: ['bert', 'reference'],
      default: 'bert',
    }),
    segmentation: Flags.string({
      description:
        "spans from the dictionary, 'random' (§5.1: the training examples' span lengths shuffled, as the reference's --do_random), or 'none' (§5.1 '+ CNN': both convolutions over the tokens, no dictionary)",
      options: ['dict', 'random', 'none'],
      default: 'dict',
    }),
  }
}

/** `finetune ner`'s flags for the token-level variant (defaults: run_ner.py's). */
export function tokenSpanFtFlags() {
  return {
    'span-ft': Flags.boolean({description: "Span Fine-tuning's token-level variant (Bao et al. §5.4)", dependsOn: ['dict']}),
    dict: Flags.string({description: DICT, dependsOn: ['span-ft']}),
    'max-spans': Flags.integer({description: "r: spans per sentence with [CLS] and [SEP] (run_ner.py's max_chunk_number)", default: 64, min: 4}),
    'max-span-tokens': Flags.integer({description: "l: sub-tokens per span (run_ner.py's max_chunk_len)", default: 16, min: 1}),
    segmentation: Flags.string({
      description:
        "spans from the dictionary, or 'random': every window's span lengths shuffled, training, dev and prediction alike, as run_ner.py's --do_random",
      options: ['dict', 'random'],
      default: 'dict',
    }),
  }
}

/** A sentence-level run's Span Fine-tuning, resolved from the flags. */
export interface SentenceSpanFt {
  /** config.json's span_ft, null for a plain run */
  sf: SpanFtConfig | null
  /** finetune_config.json's keys */
  config: SpanFtRunConfig
  /** the keys a --resume must find unchanged */
  resumeKeys: string[]
  /** reads the dictionary (null without one); call after the run directory is locked */
  readDict: () => Promise<NgramDict | null>
}

type Given = Record<string, unknown>

/** Checks the flag combinations (usage errors, exit 2) and resolves r, l and the rest against the task's defaults. */
export function sentenceSpanFt(f: Given, base: SpanDefaults, maxLen: number): SentenceSpanFt {
  const on = Boolean(f['span-ft'])
  const dict = f.dict === undefined ? null : String(f.dict)
  const seg = f.segmentation as 'dict' | 'random' | 'none'
  if (dict && !on) throw new UsageError('--dict is for --span-ft')
  if (on && !dict !== (seg === 'none'))
    throw new UsageError(seg === 'none' ? '--segmentation none uses no --dict' : '--span-ft needs --dict (or --segmentation none)')
  const g = f as Record<string, never>
  const sf = on
    ? spanFtConfig(
        {
          defaults: g['span-ft-defaults'],
          maxSpans: g['max-spans'],
          maxSpanTokens: g['max-span-tokens'],
          padding: Number(g['span-ft-padding']) as 0 | 1,
          cls: g['span-ft-cls'],
          segmentation: seg,
          maxLen,
          truncation: g['span-ft-truncation'],
        },
        base,
      )
    : null
  const config = runConfig(on, dict, sf, g['span-ft-defaults'])
  const readDict = async () => (on && dict ? readNgramDict(await openSource(dict)) : null)
  return {sf, config, resumeKeys: on ? [...SPAN_FT_KEYS] : ['span-ft'], readDict}
}

/** finetune_config.json's Span Fine-tuning keys ('max-spans' etc. 0 for a plain run). */
function runConfig(on: boolean, dict: string | null, sf: SpanFtConfig | null, defaults: string): SpanFtRunConfig {
  const keys = sf
    ? {'span-ft-defaults': defaults, 'span-ft-padding': sf.padding, 'span-ft-cls': sf.cls, segmentation: sf.segmentation, 'span-ft-truncation': sf.truncation}
    : {}
  return {'span-ft': on, dict: dict === null ? null : resolve(dict), 'max-spans': sf?.max_spans ?? 0, 'max-span-tokens': sf?.max_span_tokens ?? 0, ...keys}
}
