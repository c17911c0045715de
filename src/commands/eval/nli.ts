import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {accuracyOfFile, accuracyTable} from '../../core/tasks/common/accuracy.js'
import {NLI_LABELS, readNliFile} from '../../core/tasks/nli/read.js'

export default class EvalNli extends SpanCommand {
  static override summary = 'Accuracy of NLI predictions (SNLI, MultiNLI matched or mismatched)'
  static override description = `Gold: SNLI/MultiNLI JSON lines (sentence1, sentence2, gold_label; rows labelled "-" dropped) or
premise/hypothesis/label JSON lines. Predictions: one label (entailment, neutral, contradiction) per kept
row, in order (what span predict nli writes). MNLI's matched and mismatched sets are two files: score each.`
  static override examples = ['span eval nli --gold snli_1.0_dev.jsonl --pred dev.labels --json']
  static override flags = {
    gold: Flags.string({description: 'labelled NLI file', required: true}),
    pred: Flags.string({description: 'predicted labels, one per line', required: true}),
    json: Flags.boolean({description: 'print {"accuracy", "correct", "total"} (accuracy a fraction)', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalNli)
    const gold = readNliFile(flags.gold, {requireLabel: true}).examples.map((e) => NLI_LABELS[e.label as number])
    const a = accuracyOfFile(gold, flags.pred, NLI_LABELS, flags.gold)
    await print(flags.json ? JSON.stringify(a) + '\n' : accuracyTable('NLI', a))
  }
}
