/**
 * GLUE's submission format (what gluebenchmark.com takes, and what transformers' run_glue
 * writes): a header `index\tprediction`, then one `index\tlabel` row per example, the label as
 * the task's label string (`entailment`; `0`/`1` for CoLA, SST-2, MRPC, QQP, WNLI) and, for
 * STS-B, the score with three decimals (run_glue's `{item:3.3f}`).
 */
import {SpanError, errorAt} from '../../stream/errors.js'
import {readLines, type Source} from '../../stream/lines.js'
import {labelProblem, type GlueTask} from './tasks.js'

export const PREDICTION_HEADER = 'index\tprediction'

/**
 * One submission row. `value` is a label string, a class number (index into the task's labels),
 * or the STS-B score.
 */
export function predictionLine(task: GlueTask, index: string | number, value: string | number): string {
  if (task.labels === null) {
    const v = Number(value)
    if (!Number.isFinite(v)) throw new SpanError(`${task.name} prediction must be a number, got ${JSON.stringify(value)}`)
    return `${index}\t${v.toFixed(3)}`
  }
  if (typeof value === 'number') {
    const label = task.labels[value]
    if (!Number.isInteger(value) || label === undefined) throw new SpanError(`${task.name} has no class ${value} (0..${task.labels.length - 1})`)
    return `${index}\t${label}`
  }
  const problem = labelProblem(task, value)
  if (problem) throw new SpanError(problem)
  return `${index}\t${value}`
}

/** The whole file's text for a list of predictions. */
export function formatPredictions(task: GlueTask, rows: Iterable<{index: string | number; value: string | number}>): string {
  const lines = [PREDICTION_HEADER]
  for (const r of rows) lines.push(predictionLine(task, r.index, r.value))
  return lines.join('\n') + '\n'
}

export interface Prediction {
  value: string
  line: number
}

/** Reads a submission file: predictions by index, each checked against the task's labels. */
export async function readPredictions(src: Source, task: GlueTask): Promise<Map<string, Prediction>> {
  const out = new Map<string, Prediction>()
  let header = false
  for await (const {text: raw, no} of readLines(src)) {
    const text = no === 1 && raw.startsWith('\uFEFF') ? raw.slice(1) : raw
    if (!header) {
      if (text !== PREDICTION_HEADER) throw errorAt(src.name, no, `expected the GLUE prediction header "index<TAB>prediction", got ${JSON.stringify(text.slice(0, 80))}`)
      header = true
      continue
    }
    const f = text.split('\t')
    if (f.length !== 2) throw errorAt(src.name, no, `expected 2 tab-separated columns (index, prediction), got ${f.length}`)
    const [index, value] = [f[0].trim(), f[1].trim()]
    if (index === '') throw errorAt(src.name, no, 'empty index')
    const problem = labelProblem(task, value)
    if (problem) throw errorAt(src.name, no, problem)
    const seen = out.get(index)
    if (seen) throw errorAt(src.name, no, `index ${index} repeated (first at line ${seen.line})`)
    out.set(index, {value, line: no})
  }
  if (!header) throw errorAt(src.name, 1, 'empty predictions file')
  return out
}
