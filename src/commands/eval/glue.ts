import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {evaluateGlue} from '../../core/tasks/glue/evaluate.js'
import {scoresJson, scoresTable} from '../../core/tasks/glue/report.js'
import {GLUE_TASK_NAMES, glueTask} from '../../core/tasks/glue/tasks.js'

export default class EvalGlue extends SpanCommand {
  static override summary = 'Score GLUE predictions (submission format) against a labelled task file'
  static override description = `Gold: a GLUE train/dev .tsv as distributed. Predictions: GLUE's submission format, a header
"index<TAB>prediction" then one row per example, matched to the gold rows by index (the file's index/id
column, or the 0-based row number for CoLA, SST-2, MRPC). Missing or extra indices are an error.
Metrics as GLUE defines them: CoLA Matthews correlation; SST-2, MNLI, QNLI, RTE, WNLI accuracy; MRPC, QQP
accuracy, F1 and their mean; STS-B Pearson, Spearman and their mean. Values are fractions, not percentages.`
  static override examples = [
    'span eval glue --task RTE --gold glue_data/RTE/dev.tsv --pred RTE.tsv',
    'span eval glue --task STS-B --gold glue_data/STS-B/dev.tsv --pred STS-B.tsv --json',
  ]
  static override flags = {
    task: Flags.string({description: `GLUE task (${GLUE_TASK_NAMES.join(', ')}; case and hyphens ignored)`, required: true}),
    gold: Flags.string({description: 'labelled task file (train.tsv or dev.tsv)', required: true}),
    pred: Flags.string({description: 'predictions in the GLUE submission format', required: true}),
    json: Flags.boolean({description: 'print one JSON object instead of the table', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalGlue)
    const task = glueTask(flags.task)
    const warn = (m: string) => process.stderr.write(`span eval glue: warning: ${m}\n`)
    const scores = await evaluateGlue(task, flags.gold, flags.pred, warn)
    await print(flags.json ? scoresJson(task, scores) + '\n' : scoresTable(task, scores, flags.gold, flags.pred))
  }
}
