import {Flags} from '@oclif/core'
import {SpanCommand, print} from '../../cli/base.js'
import {conllScores, conllTable} from '../../core/metrics/conlleval.js'
import {evaluateNerFiles} from '../../core/tasks/ner/evaluate.js'
import {parseTagColumn} from '../../core/tasks/ner/tag-column.js'
import {UsageError} from '../../core/util/errors.js'
import {tagColumnFlags} from '../../cli/tag-column-flags.js'

export default class EvalNer extends SpanCommand {
  static override summary = 'Score NER predictions exactly as the CoNLL conlleval script (2004-01-26) does'
  static override description = `Chunk precision, recall and F1 and token accuracy, equal to the official Perl conlleval,
including its chunk rules (IOB1: I- opens a chunk after O or another type; B- splits two chunks of one
type) and its counting of -DOCSTART- lines as tokens. --pred is one of:
  token GOLD PRED lines (what conlleval reads; --gold then optional),
  the gold file's layout with the predicted tag last (what span predict ner writes),
  token PRED lines aligned with the gold file.
--tag-column/--tag-types read the gold tags from another column (a chunker from finetune ner --tag-column chunk
--tag-types NP: --tag-column chunk --tag-types NP scores NP chunks). Without --json, conlleval's own table; --json gives percentages as conlleval computes them.`
  static override examples = ['span eval ner --gold eng.testa --pred testa.pred', 'span eval ner --pred conlleval-input.txt --json']
  static override flags = {
    gold: Flags.string({description: 'gold CoNLL file (token ... TAG); omit when --pred has GOLD PRED columns'}),
    pred: Flags.string({description: 'predictions (see above)', required: true}),
    json: Flags.boolean({description: 'print {precision, recall, f1, accuracy, per_type} instead of the table', default: false}),
    ...tagColumnFlags(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalNer)
    const column = parseTagColumn(flags['tag-column'], flags['tag-types'])
    if (!flags.gold && (column.index !== 'last' || column.types)) throw new UsageError('--tag-column and --tag-types read the --gold file: give --gold')
    const counts = evaluateNerFiles(flags.gold ?? null, flags.pred, column)
    if (!flags.json) return void (await print(conllTable(counts)))
    const s = conllScores(counts)
    const perType = Object.fromEntries(Object.entries(s.per_type).map(([t, v]) => [t, {precision: v.precision, recall: v.recall, f1: v.f1}]))
    const out = {
      precision: s.precision,
      recall: s.recall,
      f1: s.f1,
      accuracy: s.accuracy,
      per_type: perType,
      tokens: counts.tokens,
      phrases: counts.foundCorrect,
      found: counts.foundGuessed,
      correct: counts.correctChunk,
    }
    await print(JSON.stringify(out) + '\n')
  }
}
