/**
 * McNemar's test (metrics/mcnemar.ts; Span Fine-tuning §4.2) for the tasks beyond GLUE: each
 * system's outcome is right or wrong per token for NER (the gold token lines of a CoNLL file,
 * -DOCSTART- left out) and per example for relation extraction, NLI and multiple choice, in
 * the prediction formats `span predict` writes and `span eval` reads for each task.
 */
import {mcnemar, type McNemarResult, type McNemarTest} from '../metrics/mcnemar.js'
import {readLabelLines} from './common/accuracy.js'
import {nerTagPairs} from './ner/evaluate.js'
import {NLI_LABELS, readNliFile} from './nli/read.js'
import {readSwagFile} from './swag/read.js'
import {goldRelations, readRelationPredictions} from './tacred/evaluate.js'

export const COMPARE_TASKS = ['ner', 'tacred', 'nli', 'swag'] as const
export type CompareTask = (typeof COMPARE_TASKS)[number]

export const isCompareTask = (name: string): name is CompareTask => (COMPARE_TASKS as readonly string[]).includes(name.toLowerCase())

export interface TaskComparison {
  /** what one outcome is: a token (NER) or an example */
  unit: 'token' | 'example'
  mcnemar: McNemarResult
  accA: number
  accB: number
}

/** Gold labels and one system's predictions, aligned, for a task. */
export function alignedLabels(task: CompareTask, goldPath: string, predPath: string): {gold: string[]; pred: string[]} {
  if (task === 'ner') return nerTagPairs(goldPath, predPath)
  if (task === 'tacred') {
    const gold = goldRelations(goldPath)
    return {gold, pred: readRelationPredictions(gold, predPath, goldPath)}
  }
  if (task === 'nli') {
    const gold = readNliFile(goldPath, {requireLabel: true}).examples.map((e) => NLI_LABELS[e.label as number] as string)
    return {gold, pred: readLabelLines(gold, predPath, NLI_LABELS, goldPath)}
  }
  const examples = readSwagFile(goldPath, {requireLabel: true})
  const gold = examples.map((e) => String(e.label))
  const choices = Array.from({length: examples.reduce((a, e) => Math.max(a, e.endings.length), 0)}, (_, i) => String(i))
  return {gold, pred: readLabelLines(gold, predPath, choices, goldPath)}
}

/** McNemar's test of systems A and B on one labelled file (`test`: forced, else exact below 25 discordant pairs). */
export function compareTask(task: CompareTask, goldPath: string, aPath: string, bPath: string, test?: McNemarTest): TaskComparison {
  const a = alignedLabels(task, goldPath, aPath)
  const b = alignedLabels(task, goldPath, bPath)
  const r = mcnemar(a.gold, a.pred, b.pred, test)
  return {unit: task === 'ner' ? 'token' : 'example', mcnemar: r, accA: r.correctA / r.n, accB: r.correctB / r.n}
}
