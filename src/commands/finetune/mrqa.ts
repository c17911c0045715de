import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {presetConfig, type PresetName} from '../../core/model/config.js'
import {BertForQuestionAnswering, loadQaModel} from '../../core/model/qa.js'
import {SpanError, UsageError} from '../../core/stream/errors.js'
import {readMrqaFile} from '../../core/tasks/mrqa/read.js'
import {asSquad, mrqaAdapter} from '../../core/tasks/mrqa/train.js'
import type {SquadFinetuneConfig} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune mrqa: ${line}\n`)

export default class FinetuneMrqa extends SpanCommand {
  static override summary = 'Fine-tune an encoder for extractive QA on MRQA 2019 data (.jsonl or .jsonl.gz)'
  static override description = `As SpanBERT's run_mrqa: the SQuAD v1.1 windows ([CLS] question [SEP] passage window [SEP]; --max-len 512,
--doc-stride 128 by default), trained on each question's earliest detected answer span, in the fine-tuning loop
every task shares. Dev is decoded as SQuAD v1.1 and scored by the official MRQA scorer (exact_match, f1 over
the questions' "answers"); the best checkpoint by f1 goes to --out/best.`
  static override examples = ['span finetune mrqa --init ckpt --train SQuAD-train.jsonl.gz --dev SQuAD.jsonl.gz --out mrqa-run']
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 512, minLen: 16, unit: 'window'}),
    train: Flags.string({description: 'MRQA training file'}),
    dev: Flags.string({description: 'MRQA dev file, scored at each evaluation'}),
    'doc-stride': Flags.integer({description: 'how far the window moves over a long context', default: 128, min: 1}),
    'max-query-len': Flags.integer({description: 'question tokens kept', default: 64, min: 1}),
    'n-best': Flags.integer({description: 'dev decoding: start and end candidates', default: 20, min: 1}),
    'max-answer-len': Flags.integer({description: 'dev decoding: longest answer in tokens', default: 30, min: 1}),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneMrqa), FinetuneMrqa.flags, 'mrqa', log, ['train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const train = readMrqaFile(flags.train, {needSpans: true})
    const dev = flags.dev ? readMrqaFile(flags.dev, {needSpans: false}) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config = {
      ...loopSettings(flags, 'mrqa', cased),
      task: 'mrqa',
      version: '1.1',
      'doc-stride': flags['doc-stride'],
      'max-query-len': flags['max-query-len'],
      'n-best': flags['n-best'],
      'max-answer-len': flags['max-answer-len'],
      'null-threshold': 0,
      'eval-metric': 'f1',
    } as unknown as SquadFinetuneConfig
    if (config['max-len'] < config['max-query-len'] + 4)
      throw new UsageError(`--max-len ${config['max-len']} leaves no room for the passage after --max-query-len ${config['max-query-len']}`)
    log(`config: ${JSON.stringify(config)}`)
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const model = src.dir
      ? (await loadQaModel(src.dir, config.seed)).model
      : BertForQuestionAnswering.init(
          presetConfig(flags.preset as PresetName, vocab.tokens.length, {max_position_embeddings: Math.max(512, config['max-len'])}),
          config.seed,
        )
    try {
      if (config['max-len'] > model.config.max_position_embeddings)
        throw new SpanError(`--max-len ${config['max-len']} exceeds the model's ${model.config.max_position_embeddings} positions`)
      const run = {config, model, tokenizer: new WordPieceTokenizer(vocab, {lowercase: !cased}), vocabPath: vocab.info.path, train: asSquad(train), dev: null}
      await runLoop(mrqaAdapter(run, dev, log), config, src, flags, log, ['doc-stride', 'max-query-len'])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
