/**
 * `span finetune nli` as a TaskAdapter of the one fine-tuning loop: `[CLS] premise [SEP]
 * hypothesis [SEP]` (BERT §4.1, as for MNLI), the sequence classifier over three classes, dev
 * accuracy; the best checkpoint by accuracy. The pairs are encoded by the GLUE featurizer, so
 * Span Fine-tuning (Bao et al. §3; the paper's SNLI runs) takes the sentence-pair path of
 * `finetune glue` unchanged: spans per sentence, the span CNN beside [CLS].
 */
import {copyFile} from 'node:fs/promises'
import type {BertForSequenceClassification, ClsHostBatch} from '../../model/classifier.js'
import {SPAN_FT_DICT_FILE} from '../../model/span-index.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import type {FinetuneSettings} from '../../train/finetune-config.js'
import {classifierCheckpoint} from '../common/classify.js'
import {type GlueFeature, GlueFeaturizer, collateGlue} from '../glue/features.js'
import {predictValues, spanLimits} from '../glue/predict.js'
import type {SpanDefaults} from '../glue/span-ft.js'
import {NLI_LABELS, type NliExample} from './read.js'

/** The featurizer's view of the task: three classes in NLI_LABELS order. */
export const NLI_TASK = {labels: NLI_LABELS}

/**
 * r and l of SNLI: the reference's run_glue.sh snli line (max_chunk_number 128, max_chunk_len 16;
 * BAORONGZHOU/span-fine-tuning @bca4358), or §4.1's r 16 with l 64 (SNLI's pairs are short).
 */
export const SNLI_SPAN_DEFAULTS: SpanDefaults = {reference: {r: 128, l: 16}, paper: {r: 16, l: 64}}

/** Pairs as features of the GLUE featurizer (its span settings, if any, apply). */
export const nliFeatures = (examples: NliExample[], fz: GlueFeaturizer): GlueFeature[] =>
  examples.map((e) => fz.feature({index: e.id, a: e.premise, b: e.hypothesis, label: e.label === null ? null : NLI_LABELS[e.label], line: e.line}))

/** Plain pairs (no Span Fine-tuning), cut by BERT's truncate_seq_pair. */
export const nliUnits = (examples: NliExample[], tok: WordPieceTokenizer, maxLen: number): GlueFeature[] =>
  nliFeatures(examples, new GlueFeaturizer(NLI_TASK, tok, {maxLen, dict: null}))

export interface NliRun {
  config: FinetuneSettings & {dict?: string | null}
  model: BertForSequenceClassification
  tokenizer: WordPieceTokenizer
  vocabPath: string
}

export function nliAdapter(run: NliRun, train: GlueFeature[], dev: GlueFeature[] | null): TaskAdapter<GlueFeature, ClsHostBatch> {
  const pad = run.tokenizer.vocab.special.pad
  const limits = spanLimits(run.model)
  const dict = run.config.dict
  const evaluate = async (): Promise<DevScores | null> => {
    if (!dev) return null
    const pred = await predictValues(run.model, dev, run.config['batch-size'], pad)
    return {accuracy: pred.filter((p, i) => p === dev[i].label).length / dev.length}
  }
  return {
    task: 'nli',
    params: run.model.params,
    config: run.model.config,
    units: train,
    tokens: (u) => u.ids.length,
    collate: (us) => collateGlue(us, pad, limits, false),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate,
    metric: 'accuracy',
    higherIsBetter: true,
    files: async (state) => [
      ...(await classifierCheckpoint(run.model, run.vocabPath, run.config, state)),
      ...(dict ? [{name: SPAN_FT_DICT_FILE, write: (p: string) => copyFile(dict, p)}] : []),
    ],
  }
}
