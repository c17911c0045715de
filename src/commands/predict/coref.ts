import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {SpanError} from '../../core/stream/errors.js'
import {corefModel, corefUnits, savedHead} from '../../core/tasks/coref/adapter.js'
import {readConll, writeConll} from '../../core/tasks/coref/conll.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictModel} from '../../cli/finetune-flags.js'
import {backendFlags} from '../../cli/backend-flags.js'

export default class PredictCoref extends SpanCommand {
  static override summary = 'Resolve coreference in CoNLL-2012 documents with a model from span finetune coref'
  static override description = `Writes every input document, in order, as one CoNLL-2012 stream: each line as read, the coreference
(last) column replaced by the predicted clusters (both layouts: LitBank's 13 columns, OntoGUM's 3; an OntoGUM
document's empty name is given from its file name). Documents are predicted whole, each segment independently
encoded. With the model's singletons setting (finetune coref --singletons) a span without antecedent whose
mention score is above 0 is written as a cluster of its own. --singletons/--no-singletons overrides it.
The output is what span eval coref --pred reads, also from a pipe (--pred -). A file output appears only when complete.`
  static override examples = [
    'span predict coref --model coref-run --data litbank/tenfold_splits/0/dev.ids | span eval coref --gold litbank/tenfold_splits/0/dev.ids --pred -',
  ]
  static override flags = {
    model: Flags.string({description: 'fine-tuned checkpoint directory (span finetune coref; a run directory means its best/)', required: true}),
    data: Flags.string({description: 'documents: a .conll file, a folder of them (with --split), a LitBank .ids list, or - for stdin', required: true}),
    split: Flags.string({description: "--data's split when it is a folder: GUM's train/dev/test, LitBank's FOLD/NAME"}),
    singletons: Flags.boolean({description: "keep spans without antecedent scored above 0 (default: the model's setting)", allowNo: true}),
    output: Flags.string({char: 'o', description: 'output file, - for stdout', default: '-'}),
    ...backendFlags(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictCoref)
    const docs = readConll(flags.data, {split: flags.split}) // bad data fails before a model is read
    const {dir, saved} = await predictModel(flags.model, 'coref')
    if (saved.task !== 'coref') throw new SpanError(`${flags.model}: not a span finetune coref model (task ${JSON.stringify(saved.task ?? null)})`)
    const head = {...(await savedHead(dir)), ...(flags.singletons === undefined ? {} : {singletons: flags.singletons})}
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const units = corefUnits(docs, new WordPieceTokenizer(vocab, {lowercase: !saved.cased}), head)
    await initBackend(flags.backend as BackendChoice, flags)
    const model = await corefModel(dir, undefined, head, vocab.tokens.length, 0, () => {}, true)
    try {
      const text = units.map((u, i) => writeConll(docs[i], model.predict(u))).join('')
      await this.withOutput(flags.output, (w) => w.raw(text))
    } finally {
      model.dispose()
    }
  }
}
