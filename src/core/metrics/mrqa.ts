/**
 * The MRQA 2019 shared task's official scorer (mrqa/MRQA-Shared-Task-2019,
 * mrqa_official_eval.py `evaluate`, at b86bbcc63352786f0ca246b76191f062dce4b52b) as a pure
 * function. Its normalisation and token F1 are SQuAD v1.1's (string.punctuation: ASCII only),
 * so they are shared with ./squad.ts. Every question of the data counts (a missing answer
 * scores 0) unless skipNoAnswer; predictions for ids not in the data are ignored; a qid that
 * occurs twice is scored once, with the answers of its last occurrence (a Python dict).
 * Goldens: fixtures/mrqa/golden-eval.json (tools/make-mrqa-goldens.py runs the script).
 */
import {exactMatchV1, f1ScoreV1} from './squad.js'
import {maxOf} from '../util/arrays.js'

export interface MrqaResult {
  exact_match: number
  f1: number
}

/** A question id and its gold answer texts, in data order. */
export interface MrqaQuestion {
  qid: string
  answers: string[]
}

/** read_answers: a dict keyed by qid (first position, last value). */
export function answerDict(questions: Iterable<MrqaQuestion>): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const q of questions) out.set(q.qid, q.answers)
  return out
}

/** max over the gold answers; Python's max([]) raises. */
function maxOver(qid: string, golds: string[], score: (g: string) => number): number {
  if (golds.length === 0) throw new Error(`question ${qid} has no gold answers`)
  return maxOf(golds.map(score))
}

/** evaluate(answers, predictions, skip_no_answer). */
export function evaluateMrqa(answers: Map<string, string[]>, predictions: Map<string, string>, skipNoAnswer = false): MrqaResult {
  let f1 = 0
  let em = 0
  let total = 0
  for (const [qid, golds] of answers) {
    const pred = predictions.get(qid)
    if (pred === undefined) {
      if (!skipNoAnswer) total++
      continue
    }
    total++
    em += maxOver(qid, golds, (g) => exactMatchV1(pred, g))
    f1 += maxOver(qid, golds, (g) => f1ScoreV1(pred, g))
  }
  if (total === 0) throw new Error('no questions to score (division by zero in the official script)')
  return {exact_match: (100.0 * em) / total, f1: (100.0 * f1) / total}
}
