import {Flags} from '@oclif/core'
import {existsSync} from 'node:fs'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {headFromJson, readConfigJson} from '../../core/model/classifier.js'
import {SPAN_FT_DICT_FILE} from '../../core/model/span-index.js'
import {spanFtSettings} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {predictValues} from '../../core/tasks/glue/predict.js'
import {NLI_LABELS, readNliFile} from '../../core/tasks/nli/read.js'
import {NLI_TASK, nliFeatures} from '../../core/tasks/nli/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictNli extends SpanCommand {
  static override summary = 'Predict NLI labels with a model from span finetune nli: one label per line, in input order'
  static override description = `Reads the same JSON-lines forms as span finetune nli (labels optional; rows labelled "-" are dropped,
as span eval nli drops them) and writes entailment, neutral or contradiction per kept row. A Span Fine-tuning model
(finetune nli --span-ft) segments the pairs with the dictionary saved beside it, as span predict glue does.`
  static override examples = ['span predict nli --model snli-run --data snli_1.0_dev.jsonl -o dev.labels']
  static override flags = {
    ...predictFlags('nli', 'pair'),
    output: Flags.string({char: 'o', description: 'labels file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictNli)
    const {dir, saved} = await predictModel(flags.model, 'nli')
    if (saved.task !== 'nli') throw new SpanError(`${flags.model}: not a span finetune nli model (task ${JSON.stringify(saved.task ?? null)})`)
    const maxLen = flags['max-len'] ?? (saved['max-len'] as number)
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const head = headFromJson((await readConfigJson(dir)).json, join(dir, 'config.json'))
    const sf = head.span_ft ? spanFtSettings(head.span_ft) : null
    const withDict = sf !== null && sf.segmentation !== 'none'
    if (withDict && !existsSync(join(dir, SPAN_FT_DICT_FILE)))
      throw new SpanError(`${dir}: a Span Fine-tuning model without its dictionary ${SPAN_FT_DICT_FILE}`)
    const dict = withDict ? await readNgramDict(await openSource(join(dir, SPAN_FT_DICT_FILE))) : null
    const fz = new GlueFeaturizer(NLI_TASK, new WordPieceTokenizer(vocab, {lowercase: !saved.cased}), {maxLen, dict, spanFt: sf})
    const units = nliFeatures(readNliFile(flags.data, {requireLabel: false}).examples, fz)
    await initBackend(flags.backend as BackendChoice, flags)
    const model = await classifierFor(dir, undefined, {...head, labels: [...NLI_LABELS], num_labels: 3}, vocab.tokens.length, maxLen, 0, () => {}, true)
    try {
      const pred = await predictValues(model, units, flags['batch-size'], vocab.special.pad)
      await this.withOutput(flags.output, (w) => w.raw(pred.map((k) => `${NLI_LABELS[k]}\n`).join('')))
    } finally {
      model.dispose()
    }
  }
}
