import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {readSwagFile} from '../../core/tasks/swag/read.js'
import {swagAdapter, swagUnits} from '../../core/tasks/swag/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune swag: ${line}\n`)

export default class FinetuneSwag extends SpanCommand {
  static override summary = 'Fine-tune an encoder for multiple choice (SWAG)'
  static override description = `Reads SWAG's CSV (sent1, sent2, ending0..3, label) or JSON lines with those keys. Each choice is encoded
as [CLS] sent1 [SEP] sent2 ending [SEP]; the pooled [CLS] vector is scored by Linear(H→1) and the choices'
scores share one softmax (BERT §4.4). Trained in the fine-tuning loop every task shares; dev accuracy keeps the
best checkpoint. --batch-size counts examples (each of K choices).`
  static override examples = ['span finetune swag --init ckpt --train train.csv --dev val.csv --out swag-run']
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 128, minLen: 8, unit: 'example'}),
    train: Flags.string({description: 'training examples (CSV or JSON lines)'}),
    dev: Flags.string({description: 'dev examples, scored at each evaluation'}),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneSwag), FinetuneSwag.flags, 'swag', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const train = readSwagFile(flags.train, {requireLabel: true})
    const dev = flags.dev ? readSwagFile(flags.dev, {requireLabel: true}) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config = loopSettings(flags, 'swag', cased)
    log(`config: ${JSON.stringify(config)}`)
    const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const head = {num_labels: 1, labels: [], finetuning_task: 'swag', span_ft: null}
    const model = await classifierFor(src.dir, flags.preset, head, vocab.tokens.length, config['max-len'], config.seed, log)
    try {
      const units = (d: typeof train) => swagUnits(d, tokenizer, config['max-len'])
      await runLoop(swagAdapter({config, model, tokenizer, vocabPath: vocab.info.path}, units(train), dev ? units(dev) : null), config, src, flags, log)
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
