/** `span eval mrqa`: the official scorer over an MRQA data file and a `{qid: text}` file. */
import {errorIn} from '../../util/errors.js'
import {answerDict, evaluateMrqa, type MrqaResult} from '../../metrics/mrqa.js'
import {readPredictionsFile} from '../squad/index.js'
import {readMrqaFile} from './read.js'

export interface MrqaEvaluation {
  result: MrqaResult
  missing: string[]
  unknown: string[]
}

export function evaluateMrqaFiles(dataPath: string, predPath: string, skipNoAnswer: boolean): MrqaEvaluation {
  const answers = answerDict(readMrqaFile(dataPath, {needSpans: false}).gold)
  const preds = readPredictionsFile(predPath)
  const missing = [...answers.keys()].filter((q) => !preds.has(q))
  const unknown = [...preds.keys()].filter((q) => !answers.has(q))
  if (preds.size > 0 && missing.length === answers.size)
    throw errorIn(predPath, `none of its ${preds.size} predictions is for a question of ${dataPath} (predictions for another dataset?)`)
  return {result: evaluateMrqa(answers, preds, skipNoAnswer), missing, unknown}
}
