/**
 * The GLUE tasks as distributed in `glue_data/<TASK>/{train,dev,test}.tsv` (Wang et al. 2018;
 * the column layouts and label lists of transformers' glue processors, which read the files with
 * csv.reader(delimiter='\t', quotechar=None): a row is split on tabs, quotes are text).
 *
 * Files with a header are read by column name, so train, dev and test layouts of one task (MNLI
 * train has 12 columns, dev 16; test files have no label column) share one description.
 */
import type {MetricKind} from '../../metrics/glue-score.js'
import {UsageError} from '../../stream/errors.js'

export type GlueTaskName = 'CoLA' | 'SST-2' | 'MRPC' | 'STS-B' | 'QQP' | 'MNLI' | 'QNLI' | 'RTE' | 'WNLI'

export interface GlueTask {
  name: GlueTaskName
  /** The label strings as they appear in the files and in submissions; null for regression (STS-B). */
  labels: readonly string[] | null
  metric: MetricKind
  /** Header names of the columns read (index: the example id column, when the file has one). */
  index: readonly string[]
  a: string
  b: string | null
  label: string
}

const BINARY = ['0', '1'] as const
const NLI2 = ['entailment', 'not_entailment'] as const

/** Per task, as transformers' *Processor.get_labels and glue_compute_metrics. */
export const GLUE_TASKS: Record<GlueTaskName, GlueTask> = {
  // CoLA train/dev have no header (source, label, mark, sentence); its test header is `index sentence`.
  CoLA: {name: 'CoLA', labels: BINARY, metric: 'mcc', index: ['index'], a: 'sentence', b: null, label: 'label'},
  'SST-2': {name: 'SST-2', labels: BINARY, metric: 'acc', index: ['index'], a: 'sentence', b: null, label: 'label'},
  MRPC: {name: 'MRPC', labels: BINARY, metric: 'acc_f1', index: ['index'], a: '#1 String', b: '#2 String', label: 'Quality'},
  'STS-B': {name: 'STS-B', labels: null, metric: 'corr', index: ['index'], a: 'sentence1', b: 'sentence2', label: 'score'},
  QQP: {name: 'QQP', labels: BINARY, metric: 'acc_f1', index: ['id', 'index'], a: 'question1', b: 'question2', label: 'is_duplicate'},
  MNLI: {name: 'MNLI', labels: ['contradiction', 'entailment', 'neutral'], metric: 'acc', index: ['index'], a: 'sentence1', b: 'sentence2', label: 'gold_label'},
  QNLI: {name: 'QNLI', labels: NLI2, metric: 'acc', index: ['index'], a: 'question', b: 'sentence', label: 'label'},
  RTE: {name: 'RTE', labels: NLI2, metric: 'acc', index: ['index'], a: 'sentence1', b: 'sentence2', label: 'label'},
  // WNLI's files and submissions use 0/1 (transformers WnliProcessor), not entailment strings.
  WNLI: {name: 'WNLI', labels: BINARY, metric: 'acc', index: ['index'], a: 'sentence1', b: 'sentence2', label: 'label'},
}

export const GLUE_TASK_NAMES = Object.keys(GLUE_TASKS) as GlueTaskName[]

/** MNLI's two dev sets share one format: `mnli-m` / `mnli-mm` name the same task. */
const ALIASES: Record<string, GlueTaskName> = {mnlim: 'MNLI', mnlimm: 'MNLI'}

/** A task by name, ignoring case and hyphens (`sst2`, `sts-b`, `CoLA`, `mnli-mm`). */
export function glueTask(name: string): GlueTask {
  const key = name.toLowerCase().replace(/[-_]/g, '')
  const hit = GLUE_TASK_NAMES.find((t) => t.toLowerCase().replace('-', '') === key) ?? ALIASES[key]
  if (!hit) throw new UsageError(`unknown GLUE task ${JSON.stringify(name)} (one of ${GLUE_TASK_NAMES.join(', ')})`)
  return GLUE_TASKS[hit]
}

/** Whether `value` is a valid label (or, for STS-B, a finite number); returns the error text or null. */
export function labelProblem(task: GlueTask, value: string): string | null {
  if (task.labels === null) {
    const v = Number(value)
    return value.trim() !== '' && Number.isFinite(v) ? null : `${task.name} score must be a number, got ${JSON.stringify(value)}`
  }
  if (task.labels.includes(value)) return null
  return `unknown ${task.name} label ${JSON.stringify(value)} (expected ${task.labels.join(' or ')})`
}
