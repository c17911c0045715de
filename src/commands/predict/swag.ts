import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {SpanError} from '../../core/stream/errors.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {readSwagFile} from '../../core/tasks/swag/read.js'
import {predictChoices, swagUnits} from '../../core/tasks/swag/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictSwag extends SpanCommand {
  static override summary = 'Predict multiple-choice answers with a model from span finetune swag: one choice number per line'
  static override description = 'Reads SWAG CSV or JSON lines (label optional) and writes the best-scoring choice (0-based) per example, in input order.'
  static override examples = ['span predict swag --model swag-run --data val.csv -o val.choices']
  static override flags = {
    ...predictFlags('swag', 'example'),
    output: Flags.string({char: 'o', description: 'choices file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictSwag)
    const {dir, saved} = await predictModel(flags.model, 'swag')
    if (saved.task !== 'swag') throw new SpanError(`${flags.model}: not a span finetune swag model (task ${JSON.stringify(saved.task ?? null)})`)
    const maxLen = flags['max-len'] ?? (saved['max-len'] as number)
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const units = swagUnits(readSwagFile(flags.data, {requireLabel: false}), new WordPieceTokenizer(vocab, {lowercase: !saved.cased}), maxLen)
    await initBackend(flags.backend as BackendChoice, flags)
    const model = await classifierFor(
      dir,
      undefined,
      {num_labels: 1, labels: [], finetuning_task: 'swag', span_ft: null},
      vocab.tokens.length,
      maxLen,
      0,
      () => {},
      true,
    )
    try {
      const pred = await predictChoices(model, units, flags['batch-size'], vocab.special.pad)
      await this.withOutput(flags.output, (w) => w.raw(pred.map((k) => `${k}\n`).join('')))
    } finally {
      model.dispose()
    }
  }
}
