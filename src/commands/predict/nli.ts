import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand} from '../../base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {SpanError} from '../../core/stream/errors.js'
import {classifierFor, predictClasses} from '../../core/tasks/common/classify.js'
import {NLI_LABELS, readNliFile} from '../../core/tasks/nli/read.js'
import {nliUnits} from '../../core/tasks/nli/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../finetune-flags.js'

export default class PredictNli extends SpanCommand {
  static override summary = 'Predict NLI labels with a model from span finetune nli: one label per line, in input order'
  static override description = `Reads the same JSON-lines forms as span finetune nli (labels optional; rows labelled "-" are dropped,
as span eval nli drops them) and writes entailment, neutral or contradiction per kept row.`
  static override examples = ['span predict nli --model snli-run --data snli_1.0_dev.jsonl -o dev.labels']
  static override flags = {
    ...predictFlags('nli', 'pair'),
    output: Flags.string({char: 'o', description: 'labels file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictNli)
    const {dir, saved} = await predictModel(flags.model)
    if (saved.task !== 'nli') throw new SpanError(`${flags.model}: not a span finetune nli model (task ${JSON.stringify(saved.task ?? null)})`)
    const maxLen = flags['max-len'] ?? (saved['max-len'] as number)
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const units = nliUnits(readNliFile(flags.data, {requireLabel: false}).examples, new WordPieceTokenizer(vocab, {lowercase: !saved.cased}), maxLen)
    await initBackend(flags.backend as BackendChoice, flags.threads)
    const head = {num_labels: 3, labels: [...NLI_LABELS], finetuning_task: 'nli', span_ft: null}
    const model = await classifierFor(dir, undefined, head, vocab.tokens.length, maxLen, 0, () => {})
    try {
      const pred = await predictClasses(model, units, flags['batch-size'], vocab.special.pad)
      await this.withOutput(flags.output, (w) => w.raw(pred.map((k) => `${NLI_LABELS[k]}\n`).join('')))
    } finally {
      model.dispose()
    }
  }
}
