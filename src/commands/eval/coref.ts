import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {corefJson, corefTable} from '../../core/metrics/coref/report.js'
import {evaluateCorefFiles} from '../../core/tasks/coref/evaluate.js'

export default class EvalCoref extends SpanCommand {
  static override summary = 'Score coreference predictions exactly as the official CoNLL-2012 scorer (v8.01) does'
  static override description = `MUC, B-cubed, CEAFm, CEAFe, BLANC and mention identification, equal to
conll/reference-coreference-scorers v8.01 (scorer.pl, commit f49f3f8a), and
the CoNLL F1 (mean of the MUC, B-cubed and CEAFe F1), with the scorer's rules:
documents are matched by their '#begin document' key (OntoGUM's empty names:
the file name); a gold document missing from the predictions is scored as
empty, a predicted document the gold lacks is ignored; mentions are exact
spans; predicted singletons lower B-cubed and CEAF precision but not MUC; a
gold span repeated in the predictions counts once, and more than 10 repeats
are refused. Both inputs are CoNLL-2012, LitBank's 13 columns or OntoGUM's 3,
coreference last (docs/formats.md). Without --json, the scorer's own table
('scorer.pl all GOLD PRED none': percentages truncated to two decimals), then
the CoNLL F1; --json gives unrounded percentages with each metric's
numerators and denominators.`
  static override examples = [
    'span eval coref --gold ../shared/data/coref/litbank/tenfold_splits/0/dev.ids --pred dev.pred.conll',
    'span eval coref --gold ../shared/data/coref/ontogum/conll --split dev --pred dev.pred.conll --json',
    'span predict coref --model run/best --data dev.conll | span eval coref --gold dev.conll --pred -',
  ]
  static override flags = {
    gold: Flags.string({
      description: 'gold CoNLL-2012: a .conll file, a folder of them, or a LitBank tenfold_splits/K/NAME.ids list',
      required: true,
    }),
    split: Flags.string({
      description: "only this split of a --gold folder: train, dev or test from GUM's splits.md beside it, or FOLD/NAME (0/dev) from LitBank's tenfold_splits/",
    }),
    pred: Flags.string({description: 'predicted CoNLL-2012 (a file, a folder, or - for stdin), as span predict coref writes it', required: true}),
    json: Flags.boolean({description: 'print one JSON object {muc, bcub, ceafm, ceafe, blanc, mentions, conll_f1} instead of the table', default: false}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(EvalCoref)
    const result = evaluateCorefFiles(flags.gold, flags.pred, flags.split === undefined ? {} : {split: flags.split})
    if (result.missing.length > 0)
      process.stderr.write(
        `span eval coref: ${result.missing.length} of ${result.documents.length} gold documents are not in the predictions (scored as empty), e.g. ${result.missing[0]}\n`,
      )
    if (!flags.json) return void process.stdout.write(corefTable(result))
    process.stdout.write(JSON.stringify(corefJson(result, {documents: result.documents.length, missing_documents: result.missing.length})) + '\n')
  }
}
