import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import type {McNemarTest} from '../../core/metrics/mcnemar.js'
import {COMPARE_TASKS, compareTask, isCompareTask} from '../../core/tasks/compare.js'
import {compareCoref, corefComparisonJson, corefComparisonTable} from '../../core/tasks/coref/compare.js'
import {SpanError} from '../../core/util/errors.js'
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
coref: McNemar does not apply (a document has no single right-or-wrong outcome), so it is a paired
approximate randomization test over documents on the CoNLL F1 (--trials, seeded; docs/algorithms.md).
A prediction file may be - (stdin).`
  static override examples = [
    'span eval compare --task CoLA --gold glue_data/CoLA/dev.tsv --a base.tsv --b span-ft.tsv',
    'span eval compare --task ner --gold eng.testa --a plain.pred --b span-ft.pred --json',
    'span eval compare --task coref --gold litbank/tenfold_splits/0/dev.ids --a base.conll --b span.conll',
  ]
  static override flags = {
    task: Flags.string({
      description: `GLUE classification task (${GLUE_TASK_NAMES.filter((t) => t !== 'STS-B').join(', ')}), ${COMPARE_TASKS.join(', ')} or coref`,
      required: true,
    }),
    gold: Flags.string({description: 'labelled task file (GLUE train.tsv/dev.tsv, CoNLL, TACRED/SemEval, NLI or SWAG data)', required: true}),
    a: Flags.string({description: "system A's predictions (the task's prediction format)", required: true}),
    b: Flags.string({description: "system B's predictions (the task's prediction format)", required: true}),
    test: Flags.string({
      description: 'auto: exact below 25 discordant pairs, else chi-square (McNemar; not for coref)',
      options: ['auto', 'exact', 'chi2'],
      default: 'auto',
    }),
    trials: Flags.integer({description: 'coref: randomization trials (seed 0)', default: 10_000, min: 1, max: 10_000_000}),
    json: Flags.boolean({description: 'print one JSON object instead of the table', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalCompare)
    const test = flags.test === 'auto' ? undefined : (flags.test as McNemarTest)
    const name = flags.task.toLowerCase()
    if (name === 'coref') {
      if (flags.test !== 'auto')
        throw new SpanError('--test picks a McNemar test, which does not apply to coref (a paired randomization test over documents)', 2)
      const c = compareCoref(flags.gold, flags.a, flags.b, {trials: flags.trials})
      return void process.stdout.write(flags.json ? corefComparisonJson(c) + '\n' : corefComparisonTable(c, flags.a, flags.b))
    }
    const [task, c] = isCompareTask(name)
      ? [{name}, compareTask(name, flags.gold, flags.a, flags.b, test)]
      : [glueTask(flags.task), await compareGlue(glueTask(flags.task), flags.gold, flags.a, flags.b, test)]
    await print(flags.json ? comparisonJson(task, c) + '\n' : comparisonTable(task, c, flags.a, flags.b))
  }
}
