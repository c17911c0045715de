import {Flags} from '@oclif/core'
import {SpanCommand} from '../../base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {SpanError} from '../../core/stream/errors.js'
import {classifierFor} from '../../core/tasks/common/classify.js'
import {NLI_LABELS, readNliFile} from '../../core/tasks/nli/read.js'
import {nliAdapter, nliUnits} from '../../core/tasks/nli/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {finetuneFlags, loopSettings, modelSource, runLoop, runVocab} from '../../finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune nli: ${line}\n`)

export default class FinetuneNli extends SpanCommand {
  static override summary = 'Fine-tune an encoder for natural language inference (SNLI, MultiNLI)'
  static override description = `Reads SNLI/MultiNLI JSON lines (sentence1, sentence2, gold_label; "-" rows dropped) or premise/hypothesis/label
JSON lines; [CLS] premise [SEP] hypothesis [SEP] with segment ids 0/1, cut by BERT's truncate_seq_pair; a
classifier over entailment, neutral, contradiction on the pooled [CLS] vector, trained in the fine-tuning loop
every task shares; dev accuracy keeps the best checkpoint. GLUE's TSVs (MNLI, QNLI, RTE, WNLI) go through
span finetune glue.`
  static override examples = ['span finetune nli --init ckpt --train snli_1.0_train.jsonl --dev snli_1.0_dev.jsonl --out snli-run']
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 128, minLen: 8, unit: 'pair'}),
    train: Flags.string({description: 'training pairs (JSON lines)', required: true}),
    dev: Flags.string({description: 'dev pairs, scored at each evaluation'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneNli)
    const src = await modelSource(flags, log)
    const train = readNliFile(flags.train, {requireLabel: true})
    const dev = flags.dev ? readNliFile(flags.dev, {requireLabel: true}) : null
    if (train.examples.length === 0) throw new SpanError(`${flags.train}: no labelled pairs`)
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config = {...loopSettings(flags, 'nli', cased), labels: [...NLI_LABELS]}
    log(`config: ${JSON.stringify(config)}`)
    const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
    const trainUnits = nliUnits(train.examples, tokenizer, config['max-len'])
    log(`${train.examples.length} training pairs (${train.dropped} "-" rows dropped)`)
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const head = {num_labels: 3, labels: [...NLI_LABELS], finetuning_task: 'nli', span_ft: null}
    const model = await classifierFor(src.dir, flags.preset, head, vocab.tokens.length, config['max-len'], config.seed, log)
    try {
      const devUnits = dev ? nliUnits(dev.examples, tokenizer, config['max-len']) : null
      await runLoop(nliAdapter({config, model, tokenizer, vocabPath: vocab.info.path}, trainUnits, devUnits), config, src, flags, log)
    } finally {
      model.dispose()
    }
  }
}
