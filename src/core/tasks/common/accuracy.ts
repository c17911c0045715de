/** Accuracy of one-label-per-line predictions against gold labels (NLI, SWAG). */
import {errorAt, errorIn} from '../../util/errors.js'
import {readTextLines} from './records.js'

export interface Accuracy {
  accuracy: number
  correct: number
  total: number
}

/** One predicted label per line, as many as `gold`, each one of `labels` (else one source:line error). */
export function readLabelLines(gold: readonly string[], predPath: string, labels: readonly string[], goldPath: string): string[] {
  const pred = readTextLines(predPath, 'predictions').map((l) => l.trim())
  if (pred.length !== gold.length)
    throw errorIn(predPath, `${pred.length} predictions for ${gold.length} labelled examples in ${goldPath} (one per line, in order)`)
  const bad = pred.findIndex((p) => !labels.includes(p))
  if (bad >= 0) throw errorAt(predPath, bad + 1, `unknown label ${JSON.stringify(pred[bad])} (expected one of ${labels.join(', ')})`)
  if (gold.length === 0) throw errorIn(goldPath, `no labelled examples`)
  return pred
}

/** `gold[i]` is the i-th gold label; every prediction line must be one of `labels`. */
export function accuracyOfFile(gold: string[], predPath: string, labels: readonly string[], goldPath: string): Accuracy {
  const pred = readLabelLines(gold, predPath, labels, goldPath)
  const correct = pred.filter((p, i) => p === gold[i]).length
  return {accuracy: correct / gold.length, correct, total: gold.length}
}

export const accuracyTable = (name: string, a: Accuracy): string =>
  `${name}  ${a.total} examples\n  accuracy ${(100 * a.accuracy).toFixed(2).padStart(7)}  (${a.correct} correct)\n`
