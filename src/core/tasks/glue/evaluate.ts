/**
 * Scoring predictions against a labelled GLUE file: the gold rows and the submission rows are
 * matched by index; a missing or extra index is an error, never silently scored.
 */
import {glueScores, type GlueScores} from '../../metrics/glue-score.js'
import type {Warn} from '../../metrics/glue.js'
import {mcnemar, type McNemarResult, type McNemarTest} from '../../metrics/mcnemar.js'
import {SpanError, UsageError, errorAt} from '../../stream/errors.js'
import {openSource} from '../../stream/lines.js'
import type {Prediction} from './predictions.js'
import {readPredictions} from './predictions.js'
import {readGlueFile, type GlueExample} from './read.js'
import type {GlueTask} from './tasks.js'

export interface Gold {
  source: string
  indices: string[]
  labels: string[]
}

/** The labels of a train/dev file in file order; a test file (no labels) or a repeated index is an error. */
export async function readGold(path: string, task: GlueTask): Promise<Gold> {
  const src = await openSource(path)
  const {examples, labeled} = await readGlueFile(src, task)
  if (examples.length === 0) throw new SpanError(`${src.name}: no examples`)
  if (!labeled) throw new SpanError(`${src.name}: no ${task.name} labels in this file (a test file?); scoring needs train or dev data`)
  checkUnique(examples, src.name)
  return {source: src.name, indices: examples.map((e) => e.index), labels: examples.map((e) => e.label as string)}
}

function checkUnique(examples: GlueExample[], source: string): void {
  const first = new Map<string, number>()
  for (const e of examples) {
    const at = first.get(e.index)
    if (at !== undefined) throw errorAt(source, e.line, `index ${e.index} repeated (first at line ${at})`)
    first.set(e.index, e.line)
  }
}

/** The predictions in gold order; names the first missing indices, or the first extra one with its line. */
export function align(gold: Gold, preds: Map<string, Prediction>, predSource: string): string[] {
  const missing = gold.indices.filter((i) => !preds.has(i))
  if (missing.length > 0) {
    const shown = missing.slice(0, 5).join(', ') + (missing.length > 5 ? ', …' : '')
    throw new SpanError(`${predSource}: no prediction for ${missing.length} of ${gold.indices.length} gold examples (index ${shown})`)
  }
  if (preds.size > gold.indices.length) {
    const known = new Set(gold.indices)
    const extra = [...preds].filter(([i]) => !known.has(i)).sort((x, y) => x[1].line - y[1].line)[0]
    throw errorAt(predSource, extra[1].line, `index ${extra[0]} is not in the gold file ${gold.source} (${preds.size - gold.indices.length} extra predictions)`)
  }
  return gold.indices.map((i) => (preds.get(i) as Prediction).value)
}

/** Reads and aligns one predictions file. */
export async function readAligned(path: string, task: GlueTask, gold: Gold): Promise<string[]> {
  const src = await openSource(path)
  return align(gold, await readPredictions(src, task), src.name)
}

/** `span eval glue`: the task's metrics on a gold file and a submission file. */
export async function evaluateGlue(task: GlueTask, goldPath: string, predPath: string, warn?: Warn): Promise<GlueScores> {
  const gold = await readGold(goldPath, task)
  const pred = await readAligned(predPath, task, gold)
  return glueScores(task.metric, gold.labels, pred, warn)
}

export interface Comparison {
  mcnemar: McNemarResult
  accA: number
  accB: number
}

/** `span eval compare`: McNemar's test of two systems' predictions on one classification task (§4.2, table 2). */
export async function compareGlue(task: GlueTask, goldPath: string, aPath: string, bPath: string, test?: McNemarTest): Promise<Comparison> {
  if (task.labels === null) throw new UsageError(`McNemar's test needs a classification task; ${task.name} is a regression task`)
  const gold = await readGold(goldPath, task)
  const a = await readAligned(aPath, task, gold)
  const b = await readAligned(bPath, task, gold)
  const r = mcnemar(gold.labels, a, b, test)
  return {mcnemar: r, accA: r.correctA / r.n, accB: r.correctB / r.n}
}
