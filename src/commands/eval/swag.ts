import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {accuracyOfFile, accuracyTable} from '../../core/tasks/common/accuracy.js'
import {readSwagFile} from '../../core/tasks/swag/read.js'
import {maxOf} from '../../core/util/arrays.js'

export default class EvalSwag extends SpanCommand {
  static override summary = 'Accuracy of multiple-choice (SWAG) predictions'
  static override description = `Gold: SWAG's CSV (sent1, sent2, ending0..3, label) or JSON lines with those keys. Predictions:
one choice number per line, in order (what span predict swag writes).`
  static override examples = ['span eval swag --gold val.csv --pred val.choices']
  static override flags = {
    gold: Flags.string({description: 'labelled SWAG file', required: true}),
    pred: Flags.string({description: 'predicted choice numbers, one per line', required: true}),
    json: Flags.boolean({description: 'print {"accuracy", "correct", "total"} (accuracy a fraction)', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalSwag)
    const examples = readSwagFile(flags.gold, {requireLabel: true})
    const n = maxOf(examples.map((e) => e.endings.length))
    const choices = Array.from({length: n}, (_, i) => String(i))
    const a = accuracyOfFile(
      examples.map((e) => String(e.label)),
      flags.pred,
      choices,
      flags.gold,
    )
    await print(flags.json ? JSON.stringify(a) + '\n' : accuracyTable('SWAG', a))
  }
}
