/**
 * `span eval coref`: the key and response files read as the official scorer reads them
 * (conll.ts) and scored as it scores them (metrics/coref/score.ts), with its refusal of a
 * response holding more than 10 repeated mentions.
 */
import {type CorefResult, scoreCoref} from '../../metrics/coref/score.js'
import {errorIn} from '../../util/errors.js'
import {readConll} from './conll.js'

/** The scorer's limit (CorScorer.pm 8.01: "a maximum of 10 duplicate mentions in response"). */
export const MAX_REPEATED_MENTIONS = 10

export function evaluateCorefFiles(goldPath: string, predPath: string, opts: {split?: string} = {}): CorefResult {
  const gold = readConll(goldPath, opts)
  const pred = readConll(predPath)
  const result = scoreCoref(gold, pred)
  if (result.repeated > MAX_REPEATED_MENTIONS) {
    throw errorIn(
      predPath,
      `${result.repeated} repeated mentions (a span twice in the predictions); the official scorer refuses more than ${MAX_REPEATED_MENTIONS}`,
    )
  }
  return result
}
