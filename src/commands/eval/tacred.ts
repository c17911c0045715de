import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {relationTable} from '../../core/metrics/tacred.js'
import {evaluateRelationFiles} from '../../core/tasks/tacred/evaluate.js'

export default class EvalTacred extends SpanCommand {
  static override summary = "Score relation predictions as TACRED's official scorer does"
  static override description = `Micro precision, recall and F1 over every label except the negative one, as
yuhaozhang/tacred-relation utils/scorer.py computes them (precision is 1.0 when nothing positive is
predicted, as that scorer has it). Gold: a TACRED/SemEval data file (JSON list or JSON lines, its
"relation" fields) or one label per line. Predictions: one label per line in the same order (what
span predict tacred writes). Without --json, the scorer's own output; --json gives fractions.`
  static override examples = [
    'span eval tacred --gold dev.json --pred dev.labels',
    'span eval tacred --gold semeval2010-task8-test.jsonl --pred test.labels --negative-label Other --json',
  ]
  static override flags = {
    gold: Flags.string({description: 'gold data file or one label per line', required: true}),
    pred: Flags.string({description: 'predicted labels, one per line', required: true}),
    'negative-label': Flags.string({description: 'the "no relation" label (SemEval-2010 Task 8: Other)', default: 'no_relation'}),
    json: Flags.boolean({description: 'print {"precision", "recall", "f1"} (fractions) instead of the table', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalTacred)
    const r = evaluateRelationFiles(flags.gold, flags.pred, flags['negative-label'])
    await print(flags.json ? JSON.stringify({precision: r.precision, recall: r.recall, f1: r.f1}) + '\n' : relationTable(r))
  }
}
