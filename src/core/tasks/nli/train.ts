/**
 * `span finetune nli` as a TaskAdapter of the one fine-tuning loop: `[CLS] premise [SEP]
 * hypothesis [SEP]` (BERT §4.1, as for MNLI), the sequence classifier over three classes, dev
 * accuracy; the best checkpoint by accuracy.
 */
import type {BertForSequenceClassification, ClsHostBatch} from '../../model/classifier.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import type {FinetuneSettings} from '../../train/finetune-config.js'
import {type ClassUnit, classifierCheckpoint, collateUnits, pairUnit, predictClasses} from '../common/classify.js'
import type {NliExample} from './read.js'

export const nliUnits = (examples: NliExample[], tok: WordPieceTokenizer, maxLen: number): ClassUnit[] =>
  examples.map((e) => pairUnit(tok, e.premise, e.hypothesis, maxLen, e.label))

export interface NliRun {
  config: FinetuneSettings
  model: BertForSequenceClassification
  tokenizer: WordPieceTokenizer
  vocabPath: string
}

export function nliAdapter(run: NliRun, train: ClassUnit[], dev: ClassUnit[] | null): TaskAdapter<ClassUnit, ClsHostBatch> {
  const pad = run.tokenizer.vocab.special.pad
  const evaluate = async (): Promise<DevScores | null> => {
    if (!dev) return null
    const pred = await predictClasses(run.model, dev, run.config['batch-size'], pad)
    return {accuracy: pred.filter((p, i) => p === dev[i].label).length / dev.length}
  }
  return {
    task: 'nli',
    params: run.model.params,
    config: run.model.config,
    units: train,
    tokens: (u) => u.ids.length,
    collate: (us) => collateUnits(us, pad),
    loss: (b, ctx) => run.model.loss(b, ctx),
    evaluate,
    metric: 'accuracy',
    higherIsBetter: true,
    files: (state) => classifierCheckpoint(run.model, run.vocabPath, run.config, state),
  }
}
