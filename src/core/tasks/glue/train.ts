/**
 * `span finetune glue` as a TaskAdapter of the one fine-tuning loop (train/finetune-loop.ts):
 * BERT's sentence(-pair) fine-tuning (BERT §4.1, run_classifier.py; Bao et al. §4.1 for Span
 * Fine-tuning); the dev set scored with the task's metric, the best score kept.
 */
import {copyFile, writeFile} from 'node:fs/promises'
import type {GlueScores} from '../../metrics/glue-score.js'
import {type CheckpointFile, VOCAB_FILE} from '../../model/checkpoint.js'
import {type BertForSequenceClassification, type ClsHostBatch, classifierFiles} from '../../model/classifier.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import {type FinetuneSettings, configFiles, vocabBytes} from '../../train/finetune-config.js'
import {SpanError} from '../../stream/errors.js'
import {openSource} from '../../stream/lines.js'
import {type GlueFeature, type GlueFeaturizer, collateGlue} from './features.js'
import {predictValues, scoreValues, spanLimits} from './predict.js'
import {readGlueFile} from './read.js'
import type {GlueTask} from './tasks.js'

/** The resolved settings of a run, saved as finetune_config.json beside the model. */
export interface GlueFinetuneConfig extends FinetuneSettings {
  'span-ft': boolean
  dict: string | null
  'max-spans': number
  'max-span-tokens': number
  'span-ft-defaults'?: string
  'span-ft-padding'?: number
  'span-ft-cls'?: string
  segmentation?: string
}

/** Keys a --resume must find unchanged. */
export const SPAN_FT_KEYS = ['span-ft', 'max-spans', 'max-span-tokens', 'span-ft-padding', 'span-ft-cls', 'segmentation'] as const

export {SPAN_FT_DICT_FILE} from '../../model/span-index.js'
import {SPAN_FT_DICT_FILE} from '../../model/span-index.js'

export interface GlueRun {
  config: GlueFinetuneConfig
  task: GlueTask
  model: BertForSequenceClassification
  padId: number
  vocabPath: string
  train: GlueFeature[]
  dev: GlueFeature[] | null
}

/** The GLUE task for the fine-tuning loop (see train/adapter.ts): the best checkpoint by the task's score. */
export function glueAdapter(run: GlueRun): TaskAdapter<GlueFeature, ClsHostBatch> {
  const regression = run.model.head.num_labels === 1
  const limits = spanLimits(run.model)
  return {
    task: 'glue',
    params: run.model.params,
    config: run.model.config,
    units: run.train,
    tokens: (f) => f.ids.length,
    collate: (fs) => collateGlue(fs, run.padId, limits, regression),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate: async () => (run.dev ? ((await devScores(run)) as unknown as DevScores) : null),
    metric: 'score',
    higherIsBetter: true,
    files: (state) => glueCheckpointFiles(run, state),
  }
}

export async function devScores(run: GlueRun): Promise<GlueScores> {
  const dev = run.dev as GlueFeature[]
  const values = await predictValues(run.model, dev, run.config['batch-size'], run.padId)
  return scoreValues(run.task, dev, values)
}

/** config.json, model.safetensors, vocab.txt, tokenizer_config.json, finetune_config.json (+ the dictionary). */
export async function glueCheckpointFiles(run: GlueRun, state: Record<string, unknown>): Promise<CheckpointFile[]> {
  const c = run.config
  const extra = c.dict ? [{name: SPAN_FT_DICT_FILE, write: (p: string) => copyFile(c.dict as string, p)}] : []
  return [
    ...(await classifierFiles(run.model)),
    {name: VOCAB_FILE, write: (p: string) => writeFile(p, vocabBytes(run.vocabPath))},
    ...configFiles(c, state),
    ...extra,
  ]
}

/** Reads a labelled TSV and encodes it; a test file (no labels) or an empty one is an error. */
export async function readGlueFeatures(path: string, task: GlueTask, fz: GlueFeaturizer): Promise<GlueFeature[]> {
  const src = await openSource(path)
  const {examples, labeled} = await readGlueFile(src, task)
  if (examples.length === 0) throw new SpanError(`${src.name}: no examples`)
  if (!labeled) throw new SpanError(`${src.name}: no ${task.name} labels in this file (a test file?); training and dev need labels`)
  return examples.map((ex) => fz.feature(ex))
}
