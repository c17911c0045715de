/**
 * `span eval tacred`: gold labels from a TACRED/SemEval data file (JSON list or lines, its
 * `relation` fields) or from a file of one label per line (what the official scorer reads);
 * predictions one label per line in the same order.
 */
import {errorAt, errorIn} from '../../util/errors.js'
import {scoreRelations, type RelationReport} from '../../metrics/tacred.js'
import {readTaskText, readTextLines} from '../common/records.js'
import {readRelationFile} from './read.js'

/** The gold labels of a data file or of a label-per-line file. */
export function goldRelations(path: string): string[] {
  const first = readTaskText(path).trimStart()[0]
  if (first === '[' || first === '{') return readRelationFile(path, {requireLabel: true}).map((e) => e.relation as string)
  return readTextLines(path)
}

/** One predicted label per line, as many as the gold labels, none empty. */
export function readRelationPredictions(gold: readonly string[], predPath: string, goldPath: string): string[] {
  const pred = readTextLines(predPath, 'predictions')
  if (gold.length !== pred.length)
    throw errorIn(predPath, `${pred.length} predictions for ${gold.length} gold examples in ${goldPath} (one label per line, in order)`)
  const empty = pred.findIndex((p) => p.trim() === '')
  if (empty >= 0) throw errorAt(predPath, empty + 1, 'empty label')
  return pred
}

export function evaluateRelationFiles(goldPath: string, predPath: string, negative: string): RelationReport {
  const gold = goldRelations(goldPath)
  return scoreRelations(gold, readRelationPredictions(gold, predPath, goldPath), negative)
}
