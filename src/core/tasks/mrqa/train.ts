/**
 * `span finetune mrqa`: MRQA questions through SQuAD's windows, loss and decoding (SpanBERT's
 * run_mrqa.py: the SQuAD v1.1 machinery, max-len 512, stride 128, trained on the earliest
 * detected answer span), scored on dev by the official MRQA scorer (metrics/mrqa.ts).
 */
import {answerDict, evaluateMrqa} from '../../metrics/mrqa.js'
import type {QaHostBatch} from '../../model/qa.js'
import type {DevScores, TaskAdapter} from '../../train/adapter.js'
import type {SquadDataset} from '../squad/dataset.js'
import {collectOutputs} from '../squad/index.js'
import {predictSquad} from '../squad/predict.js'
import {type SquadFinetuneConfig, type SquadRun, type TrainWindow, squadAdapter, windowOptions} from '../squad/train.js'
import type {MrqaFile} from './read.js'

/** An MRQA file as the SQuAD v1.1 dataset its windows are built from. */
export const asSquad = (f: MrqaFile): SquadDataset => ({source: f.source, declaredVersion: null, version: '1.1', examples: f.examples})

/** The {qid: text} predictions of an MRQA file (v1.1 decoding: always an answer). */
export async function predictMrqa(
  run: Pick<SquadRun, 'model' | 'tokenizer'>,
  c: SquadFinetuneConfig,
  f: MrqaFile,
  batchSize: number,
): Promise<Record<string, string>> {
  const decode = {nBest: c['n-best'], maxAnswerLen: c['max-answer-len'], v2: false, nullThreshold: 0}
  const preds = await predictSquad(run.model, run.tokenizer, f.examples, {windows: windowOptions(c), batchSize, decode})
  return collectOutputs(preds).predictions as Record<string, string>
}

/** SQuAD's adapter with MRQA's name, dev scoring (exact_match, f1 by the official scorer) and metric f1. */
export function mrqaAdapter(run: SquadRun, dev: MrqaFile | null, log: (l: string) => void): TaskAdapter<TrainWindow, QaHostBatch> {
  const base = squadAdapter({...run, dev: null}, log)
  const evaluate = async (): Promise<DevScores | null> => {
    if (!dev) return null
    const preds = await predictMrqa(run, run.config, dev, run.config['batch-size'])
    const r = evaluateMrqa(answerDict(dev.gold), new Map(Object.entries(preds)))
    return {exact_match: r.exact_match, f1: r.f1}
  }
  return {...base, task: 'mrqa', evaluate, metric: 'f1', higherIsBetter: true}
}
