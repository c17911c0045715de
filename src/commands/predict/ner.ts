import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE} from '../../core/model/checkpoint.js'
import {readConfigJson} from '../../core/model/classifier.js'
import {SPAN_FT_DICT_FILE} from '../../core/model/span-index.js'
import type {SpanFtConfig} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {type TagScheme, readConllFile} from '../../core/tasks/ner/read.js'
import {type NerFinetuneConfig, nerModel, nerUnits, predictTags, randomSegmentation} from '../../core/tasks/ner/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {loadVocab} from '../../core/text/vocab.js'
import {predictFlags, predictModel} from '../../cli/finetune-flags.js'

export default class PredictNer extends SpanCommand {
  static override summary = 'Tag a CoNLL file with a model from span finetune ner: the input lines with the predicted tag appended'
  static override description = `Every input line is written back with the predicted tag as a new last column (-DOCSTART- lines get O;
blank lines stay blank), in the scheme the model was trained on unless --scheme is given: the form span eval ner
reads beside the gold file. A Span Fine-tuning model (finetune ner --span-ft) segments the sentences with the
dictionary saved beside it (one trained with --segmentation random shuffles every window's span lengths, seeded
with its --seed, as run_ner.py --do_random does for its test features). A file output appears only when complete.`
  static override examples = ['span predict ner --model ner-run --data eng.testa -o testa.pred && span eval ner --gold eng.testa --pred testa.pred']
  static override flags = {
    ...predictFlags('ner', 'window'),
    scheme: Flags.string({description: "tag scheme of the output (default: the training file's)", options: ['iob1', 'iob2']}),
    output: Flags.string({char: 'o', description: 'output file, - for stdout', default: '-'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(PredictNer)
    const {dir, saved} = await predictModel(flags.model, 'ner')
    if (saved.task !== 'ner') throw new SpanError(`${flags.model}: not a span finetune ner model (task ${JSON.stringify(saved.task ?? null)})`)
    const c = saved as unknown as NerFinetuneConfig
    const maxLen = flags['max-len'] ?? c['max-len']
    const vocab = loadVocab(join(dir, VOCAB_FILE))
    const file = readConllFile(flags.data, {labeled: false})
    const {json} = await readConfigJson(dir)
    const span_ft = (json.span_ft ?? null) as SpanFtConfig | null
    const segs = span_ft ? {dict: await readNgramDict(await openSource(join(dir, SPAN_FT_DICT_FILE))), r: span_ft.max_spans} : null
    const read = nerUnits(file, c.labels, new WordPieceTokenizer(vocab, {lowercase: !c.cased}), maxLen, c.stride, segs)
    const [units] = span_ft?.segmentation === 'random' ? randomSegmentation(c.seed, read) : [read] // as run_ner.py shuffles its test features
    await initBackend(flags.backend as BackendChoice, flags)
    const head = {num_labels: c.labels.length, labels: c.labels, finetuning_task: 'ner', span_ft}
    const model = await nerModel(dir, undefined, head, vocab.tokens.length, maxLen, 0, () => {}, true)
    try {
      const tags = await predictTags(model, file, units, c.labels, (flags.scheme as TagScheme | undefined) ?? c.scheme, flags['batch-size'], vocab.special.pad)
      const tagOf = new Map<number, string>()
      file.sentences.forEach((s, k) => s.lines.forEach((li, w) => tagOf.set(li, tags[k][w])))
      const text = file.lines.map((l, i) => (l.kind === 'blank' ? l.text : `${l.text} ${tagOf.get(i) ?? 'O'}`)).join('\n') + '\n'
      await this.withOutput(flags.output, (w) => w.raw(text))
    } finally {
      model.dispose()
    }
  }
}
