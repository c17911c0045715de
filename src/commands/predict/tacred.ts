import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {SpanError} from '../../core/stream/errors.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {MarkerVocab} from '../../core/tasks/tacred/features.js'
import {readRelationFile} from '../../core/tasks/tacred/read.js'
import {predictRelations, relationUnits, type TacredFinetuneConfig} from '../../core/tasks/tacred/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictTacred extends SpanCommand {
  static override summary = 'Predict relations with a model from span finetune tacred: one label per line, in input order'
  static override description = `Reads TACRED JSON (a list) or JSON lines (relation optional), marks subject and object as the model was
fine-tuned (its --feature-mode and marker tokens; a type it never saw becomes [UNK]) and writes one label per line,
the form span eval tacred and TACRED's official scorer read. A file output appears only when complete.`
  static override examples = ['span predict tacred --model tacred-run --data test.json -o test.labels']
  static override flags = {
    ...predictFlags('tacred', 'example'),
    output: Flags.string({char: 'o', description: 'labels file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictTacred)
    const {dir, saved} = await predictModel(flags.model, 'tacred')
    if (saved.task !== 'tacred') throw new SpanError(`${flags.model}: not a span finetune tacred model (task ${JSON.stringify(saved.task ?? null)})`)
    const c = saved as unknown as TacredFinetuneConfig
    const config = {...c, 'max-len': flags['max-len'] ?? c['max-len']}
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const markers = new MarkerVocab(vocab.tokens.length, c.markers, true, vocab.special.unk)
    const examples = readRelationFile(flags.data, {requireLabel: false})
    const units = relationUnits(examples, {config, tokenizer: new WordPieceTokenizer(vocab, {lowercase: !c.cased}), markers})
    await initBackend(flags.backend as BackendChoice, flags)
    const head = {num_labels: c.labels.length, labels: c.labels, finetuning_task: 'tacred', span_ft: null}
    const model = await classifierFor(dir, undefined, head, vocab.tokens.length + c.markers.length, config['max-len'], 0, () => {}, true)
    try {
      const labels = await predictRelations(model, units, c.labels, flags['batch-size'], vocab.special.pad)
      await this.withOutput(flags.output, (w) => w.raw(labels.map((l) => `${l}\n`).join('')))
    } finally {
      model.dispose()
    }
  }
}
