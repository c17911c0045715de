/**
 * `span finetune tacred` as a TaskAdapter of the one fine-tuning loop (train/finetune-loop.ts):
 * SpanBERT's run_tacred inputs (./features.ts), a classifier on the pooled [CLS] vector, and dev
 * scoring with TACRED's official micro P/R/F1 (metrics/tacred.ts); the best checkpoint by f1.
 */
import type {BertForSequenceClassification, ClsHostBatch} from '../../model/classifier.js'
import {scoreRelations} from '../../metrics/tacred.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import type {FinetuneSettings} from '../../train/finetune-config.js'
import {type ClassUnit, classifierCheckpoint, collateUnits, predictClasses} from '../common/classify.js'
import {type FeatureMode, MarkerVocab, relationFeature} from './features.js'
import type {RelationExample} from './read.js'

export interface TacredFinetuneConfig extends FinetuneSettings {
  task: 'tacred'
  'feature-mode': FeatureMode
  'negative-label': string
  labels: string[]
  /** marker tokens in id order (ids vocab size + k) */
  markers: string[]
}

export interface TacredRun {
  config: TacredFinetuneConfig
  model: BertForSequenceClassification
  tokenizer: WordPieceTokenizer
  vocabPath: string
  markers: MarkerVocab
  train: RelationExample[]
  dev: RelationExample[] | null
}

/** Units of examples (markers are added to `markers` unless it is frozen). */
export function relationUnits(examples: RelationExample[], run: Pick<TacredRun, 'config' | 'tokenizer' | 'markers'>): ClassUnit[] {
  const c = run.config
  return examples.map((ex) => {
    const f = relationFeature(ex, c['feature-mode'], run.tokenizer, run.markers, c['max-len'], c.labels)
    return {ids: f.ids, secondStart: f.ids.length, label: f.label}
  })
}

/** Predicted label strings of examples. */
export async function predictRelations(
  model: BertForSequenceClassification,
  units: ClassUnit[],
  labels: string[],
  batchSize: number,
  padId: number,
): Promise<string[]> {
  return (await predictClasses(model, units, batchSize, padId)).map((k) => labels[k])
}

export function tacredAdapter(run: TacredRun, trainUnits: ClassUnit[], devUnits: ClassUnit[] | null): TaskAdapter<ClassUnit, ClsHostBatch> {
  const c = run.config
  const pad = run.tokenizer.vocab.special.pad
  const evaluate = async (): Promise<DevScores | null> => {
    if (!run.dev || !devUnits) return null
    const pred = await predictRelations(run.model, devUnits, c.labels, c['batch-size'], pad)
    const r = scoreRelations(
      run.dev.map((e) => e.relation as string),
      pred,
      c['negative-label'],
    )
    return {precision: r.precision, recall: r.recall, f1: r.f1}
  }
  return {
    task: 'tacred',
    params: run.model.params,
    config: run.model.config,
    units: trainUnits,
    tokens: (u) => u.ids.length,
    collate: (us) => collateUnits(us, pad),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate,
    metric: 'f1',
    higherIsBetter: true,
    files: (state) => classifierCheckpoint(run.model, run.vocabPath, c, state),
  }
}
