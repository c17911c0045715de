import {Flags} from '@oclif/core'
import {SpanCommand, numberFlag} from '../../base.js'
import {backendFlags} from '../../backend-flags.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {type BertConfig, type PresetName, PRESETS, presetConfig} from '../../core/model/config.js'
import {BertForQuestionAnswering, loadQaModel} from '../../core/model/qa.js'
import {VOCAB_FILE, isCheckpoint} from '../../core/model/checkpoint.js'
import {setDropout} from '../../core/train/setup.js'
import {SpanError} from '../../core/stream/errors.js'
import {LineWriter} from '../../core/stream/writer.js'
import {readSquadFile, type SquadDataset, type SquadVersion} from '../../core/tasks/squad/index.js'
import {type FinetuneConfig, finetuneSquad, makeSquadProgress} from '../../core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {DEFAULT_VOCAB, type Vocab, loadVocab} from '../../core/text/vocab.js'
import {join} from 'node:path'

export default class FinetuneSquad extends SpanCommand {
  static override summary = 'Fine-tune a BERT/SpanBERT encoder for extractive QA on SQuAD v1.1 or v2.0'
  static override description = `Builds run_squad's windows ([CLS] question [SEP] passage window [SEP], --max-len, --doc-stride,
--max-query-len) with the answer's token span as the label ([CLS] where the window lacks it or the question
is unanswerable), and trains a Linear(H→2) start/end layer on the last hidden states together with the encoder
(loss: mean of the start and end cross-entropies; BERT §4.2, SpanBERT appendix B). AdamW (β 0.9/0.999,
ε 1e-8, weight decay 0.01 except biases and LayerNorm), linear warm-up over --warmup-proportion of the steps
then linear decay, gradient clipping at --clip, --accumulate micro-batches per step.
--init is a span checkpoint or any Hugging Face BERT (config.json + model.safetensors + vocab.txt; pre-training
heads are ignored; the QA head starts N(0, 0.02) with zero bias); --preset starts from a random model instead.
The tokenizer's casing comes from the checkpoint (tokenizer_config.json do_lower_case, else the vocabulary).
stdout: {step, epoch, loss, lr} every --log-every steps; after each epoch with --dev
{"split":"dev", epoch, step, exact, f1, best}. --out DIR receives the best checkpoint by dev F1 (the latest
without --dev): config.json, model.safetensors, vocab.txt, tokenizer_config.json, finetune_config.json.`
  static override examples = [
    'span finetune squad --init ckpt --train train-v1.1.json --dev dev-v1.1.json --out squad-ckpt',
    'span finetune squad --init bert-base-cased --train train-v2.0.json --epochs 2 --batch-size 12 --accumulate 4 --out out',
  ]
  static override flags = {
    init: Flags.string({description: 'checkpoint directory to start from (span or Hugging Face BERT)', exclusive: ['preset']}),
    preset: Flags.string({description: 'start from a randomly initialised model of this size instead of --init', options: Object.keys(PRESETS)}),
    vocab: Flags.string({description: 'vocabulary of a --preset model (default: the embedded one)', dependsOn: ['preset']}),
    train: Flags.string({description: 'SQuAD training set (JSON)', required: true}),
    dev: Flags.string({description: 'SQuAD dev set: scored after every epoch; the best F1 is kept'}),
    out: Flags.string({description: 'output checkpoint directory', required: true}),
    version: Flags.string({description: 'SQuAD version (default: detected from the file)', options: ['1.1', '2.0']}),
    cased: Flags.boolean({description: 'keep case and accents (overrides the checkpoint)', exclusive: ['uncased']}),
    uncased: Flags.boolean({description: 'lowercase and strip accents (overrides the checkpoint)', exclusive: ['cased']}),
    'max-len': Flags.integer({description: 'max_seq_length: tokens per window', default: 384, min: 8}),
    'doc-stride': Flags.integer({description: 'how far the window moves over a long passage', default: 128, min: 1}),
    'max-query-len': Flags.integer({description: 'question tokens kept', default: 64, min: 1}),
    lr: numberFlag('peak learning rate', {default: 5e-5, min: 0}),
    'warmup-proportion': numberFlag('share of the steps spent warming up', {default: 0.1, min: 0}),
    'weight-decay': numberFlag('AdamW decoupled weight decay', {default: 0.01, min: 0}),
    clip: numberFlag('gradient clipping: largest global L2 norm (0: off)', {default: 1.0, min: 0}),
    epochs: Flags.integer({description: 'passes over the training windows', default: 3, min: 1}),
    'batch-size': Flags.integer({description: 'windows per micro-batch (and per inference batch)', default: 32, min: 1}),
    accumulate: Flags.integer({description: 'micro-batches whose gradients make one step', default: 1, min: 1}),
    seed: Flags.integer({description: 'seed of the QA head, the order and dropout', default: 1, min: 0}),
    ...backendFlags(),
    'log-every': Flags.integer({description: 'steps per metrics record', default: 10, min: 1}),
    dropout: numberFlag('hidden and attention dropout (default: the checkpoint\'s or preset\'s, 0.1)', {min: 0, max: 0.999}),
    'n-best': Flags.integer({description: 'dev decoding: start and end candidates', default: 20, min: 1}),
    'max-answer-len': Flags.integer({description: 'dev decoding: longest answer in tokens', default: 30, min: 1}),
    'null-threshold': numberFlag('dev decoding (v2.0): predict no answer when null score − best span score exceeds this', {default: 0}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneSquad)
    if (!flags.init && !flags.preset) throw new SpanError('give --init CHECKPOINT (or --preset NAME for a randomly initialised model)')
    if (flags.init && !(await isCheckpoint(flags.init))) throw new SpanError(`${flags.init}: not a checkpoint directory (no config.json)`)
    const train = readSquadFile(flags.train, {checkOffsets: true})
    const dev = flags.dev ? readSquadFile(flags.dev) : null
    const version = (flags.version as SquadVersion | undefined) ?? train.version
    const vocab = loadVocab(flags.init ? join(flags.init, VOCAB_FILE) : (flags.vocab ?? DEFAULT_VOCAB))
    const cased = flags.cased ? true : flags.uncased ? false : vocab.cased
    const config = this.runConfig(flags, version, cased)
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const model = await this.model(flags, config, vocab)
    setDropout(model.config, flags.dropout) // issue 14
    try {
      const out = new LineWriter(process.stdout)
      const tokenizer = new WordPieceTokenizer(vocab, {lowercase: !cased})
      const log = (line: string) => process.stderr.write(`span finetune squad: ${line}\n`)
      log(`config: ${JSON.stringify(config)}`)
      const run = {config, model, tokenizer, vocabPath: vocab.info.path, train, dev: dev as SquadDataset | null}
      await finetuneSquad(run, {out, log, progress: makeSquadProgress()})
      await out.end()
    } finally {
      model.dispose()
    }
  }

  private runConfig(flags: Record<string, unknown>, version: SquadVersion, cased: boolean): FinetuneConfig {
    const f = flags as Record<string, never>
    return {
      task: 'squad', init: flags.init ? String(flags.init) : `preset:${String(flags.preset)}`, train: f.train, dev: f.dev ?? null, out: f.out,
      version, cased, 'max-len': f['max-len'], 'doc-stride': f['doc-stride'], 'max-query-len': f['max-query-len'],
      lr: f.lr, 'warmup-proportion': f['warmup-proportion'], 'weight-decay': f['weight-decay'], clip: f.clip, epochs: f.epochs,
      'batch-size': f['batch-size'], accumulate: f.accumulate, seed: f.seed, backend: f.backend, threads: f.threads ?? null, 'log-every': f['log-every'],
      'n-best': f['n-best'], 'max-answer-len': f['max-answer-len'], 'null-threshold': f['null-threshold'],
    }
  }

  /** The model to fine-tune, checked against the vocabulary and --max-len. */
  private async model(flags: {init?: string; preset?: string}, c: FinetuneConfig, vocab: Vocab): Promise<BertForQuestionAnswering> {
    let model: BertForQuestionAnswering
    if (flags.init) {
      const loaded = await loadQaModel(flags.init, c.seed)
      model = loaded.model
      const log = (line: string) => process.stderr.write(`span finetune squad: ${line}\n`)
      if (loaded.initialised.length) log(`initialised ${loaded.initialised.join(', ')}`)
      if (loaded.ignored.length) log(`ignored ${loaded.ignored.length} checkpoint tensors (${loaded.ignored.slice(0, 3).join(', ')}${loaded.ignored.length > 3 ? ', …' : ''})`)
    } else {
      const positions = Math.max(512, c['max-len'])
      const config: BertConfig = presetConfig(flags.preset as PresetName, vocab.tokens.length, {pad_token_id: vocab.special.pad, max_position_embeddings: positions})
      model = BertForQuestionAnswering.init(config, c.seed)
    }
    try {
      checkFits(model.config, vocab, c, flags.init ?? 'the model')
    } catch (err) {
      model.dispose()
      throw err
    }
    return model
  }
}

function checkFits(m: BertConfig, vocab: Vocab, c: FinetuneConfig, source: string): void {
  if (c['max-len'] > m.max_position_embeddings) throw new SpanError(`--max-len ${c['max-len']} exceeds ${source}'s ${m.max_position_embeddings} positions (max_position_embeddings)`)
  if (vocab.tokens.length > m.vocab_size) throw new SpanError(`${vocab.info.path} has ${vocab.tokens.length} entries, ${source} only ${m.vocab_size} (vocab_size)`)
  if (c['max-len'] < c['max-query-len'] + 4) throw new SpanError(`--max-len ${c['max-len']} leaves no room for the passage after --max-query-len ${c['max-query-len']}`)
}
