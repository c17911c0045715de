import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {formatV1Json} from '../../core/metrics/squad-format.js'
import {evaluateMrqaFiles} from '../../core/tasks/mrqa/evaluate.js'
import {describeIds} from '../../core/tasks/squad/index.js'

export default class EvalMrqa extends SpanCommand {
  static override summary = 'Score MRQA predictions as the official mrqa_official_eval.py does'
  static override description = `Exact match and token F1 (SQuAD v1.1's normalisation: ASCII punctuation only), the maximum over
each question's "answers". A question without a prediction counts 0 (unless --skip-no-answer); predictions
for ids not in the data are ignored; both are reported on stderr. --json prints what the official script
prints last.`
  static override examples = ['span eval mrqa --data SQuAD.jsonl.gz --pred predictions.json --json']
  static override flags = {
    data: Flags.string({description: 'MRQA data (.jsonl or .jsonl.gz)', required: true}),
    pred: Flags.string({description: 'predictions: {"qid": "answer text"}', required: true}),
    'skip-no-answer': Flags.boolean({description: "leave unanswered questions out of the total (the script's --skip-no-answer)", default: false}),
    json: Flags.boolean({description: 'print {"exact_match", "f1"} as the official script does', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalMrqa)
    const {result, missing, unknown} = evaluateMrqaFiles(flags.data, flags.pred, flags['skip-no-answer'])
    const warn = (m: string) => process.stderr.write(`span eval mrqa: warning: ${m}\n`)
    if (missing.length > 0)
      warn(describeIds(missing, flags['skip-no-answer'] ? 'questions without a prediction, skipped' : 'questions without a prediction, counted as wrong'))
    if (unknown.length > 0) warn(describeIds(unknown, 'predictions for ids not in the data, ignored'))
    await print(
      flags.json
        ? formatV1Json(result)
        : `MRQA  exact match ${result.exact_match.toFixed(2).padStart(7)}\n      F1          ${result.f1.toFixed(2).padStart(7)}\n`,
    )
  }
}
