import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../base.js'
import type {McNemarTest} from '../../core/metrics/mcnemar.js'
import {COMPARE_TASKS, compareTask, isCompareTask} from '../../core/tasks/compare.js'
import {compareGlue} from '../../core/tasks/glue/evaluate.js'
import {comparisonJson, comparisonTable} from '../../core/tasks/glue/report.js'
import {GLUE_TASK_NAMES, glueTask} from '../../core/tasks/glue/tasks.js'

export default class EvalCompare extends SpanCommand {
  static override summary = "McNemar's test between two systems' predictions on the same labelled file"
  static override description = `The significance test of Span Fine-tuning (Bao et al. §4.2, table 2). Counts b (A right, B wrong) and
c (A wrong, B right); with --test auto, the exact two-sided binomial test when b + c < 25, otherwise the
continuity-corrected chi-square test with 1 degree of freedom (statsmodels' mcnemar).
GLUE classification tasks: one outcome per example (GLUE submission files).
ner: one outcome per token (each gold token line's tag right or wrong; -DOCSTART- left out), predictions in any
form span eval ner reads. tacred, nli, swag: one outcome per example, one label (choice) per line in order.
A prediction file may be - (stdin).`
  static override examples = [
    'span eval compare --task CoLA --gold glue_data/CoLA/dev.tsv --a base.tsv --b span-ft.tsv',
    'span eval compare --task ner --gold eng.testa --a plain.pred --b span-ft.pred --json',
  ]
  static override flags = {
    task: Flags.string({
      description: `GLUE classification task (${GLUE_TASK_NAMES.filter((t) => t !== 'STS-B').join(', ')}) or ${COMPARE_TASKS.join(', ')}`,
      required: true,
    }),
    gold: Flags.string({description: 'labelled task file (GLUE train.tsv/dev.tsv, CoNLL, TACRED/SemEval, NLI or SWAG data)', required: true}),
    a: Flags.string({description: "system A's predictions (the task's prediction format)", required: true}),
    b: Flags.string({description: "system B's predictions (the task's prediction format)", required: true}),
    test: Flags.string({description: 'auto: exact below 25 discordant pairs, else chi-square', options: ['auto', 'exact', 'chi2'], default: 'auto'}),
    json: Flags.boolean({description: 'print one JSON object instead of the table', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalCompare)
    const test = flags.test === 'auto' ? undefined : (flags.test as McNemarTest)
    const name = flags.task.toLowerCase()
    const [task, c] = isCompareTask(name)
      ? [{name}, compareTask(name, flags.gold, flags.a, flags.b, test)]
      : [glueTask(flags.task), await compareGlue(glueTask(flags.task), flags.gold, flags.a, flags.b, test)]
    await print(flags.json ? comparisonJson(task, c) + '\n' : comparisonTable(task, c, flags.a, flags.b))
  }
}
