/** Accuracy of one-label-per-line predictions against gold labels (NLI, SWAG). */
import {errorAt, SpanError} from '../../stream/errors.js'
import {readTextLines} from './records.js'

export interface Accuracy {
  accuracy: number
  correct: number
  total: number
}

/** `gold[i]` is the i-th gold label; every prediction line must be one of `labels`. */
export function accuracyOfFile(gold: string[], predPath: string, labels: readonly string[], goldPath: string): Accuracy {
  const pred = readTextLines(predPath).map((l) => l.trim())
  if (pred.length !== gold.length)
    throw new SpanError(`${predPath}: ${pred.length} predictions for ${gold.length} labelled examples in ${goldPath} (one per line, in order)`)
  let correct = 0
  pred.forEach((p, i) => {
    if (!labels.includes(p)) throw errorAt(predPath, i + 1, `unknown label ${JSON.stringify(p)} (expected one of ${labels.join(', ')})`)
    if (p === gold[i]) correct++
  })
  if (gold.length === 0) throw new SpanError(`${goldPath}: no labelled examples`)
  return {accuracy: correct / gold.length, correct, total: gold.length}
}

export const accuracyTable = (name: string, a: Accuracy): string =>
  `${name}  ${a.total} examples\n  accuracy ${(100 * a.accuracy).toFixed(2).padStart(7)}  (${a.correct} correct)\n`
