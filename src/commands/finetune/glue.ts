import {Flags} from '@oclif/core'
import {join} from 'node:path'
import {SpanCommand, numberFlag} from '../../base.js'
import {backendFlags} from '../../backend-flags.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {VOCAB_FILE, isCheckpoint} from '../../core/model/checkpoint.js'
import {setDropout} from '../../core/train/setup.js'
import {BertForSequenceClassification, type HeadConfig, loadClassifier} from '../../core/model/classifier.js'
import {type BertConfig, type PresetName, PRESETS, presetConfig} from '../../core/model/config.js'
import {spanFtExtraParams} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {LineWriter} from '../../core/stream/writer.js'
import {type GlueFeature, GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {readGlueFile} from '../../core/tasks/glue/read.js'
import {GLUE_TASK_NAMES, type GlueTask, glueTask} from '../../core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, finetuneGlue, lineProgress} from '../../core/tasks/glue/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {DEFAULT_VOCAB, type Vocab, loadVocab} from '../../core/text/vocab.js'

const LOG = 'span finetune glue'

export default class FinetuneGlue extends SpanCommand {
  static override summary = 'Fine-tune a BERT/SpanBERT encoder on a GLUE task (optionally with Span Fine-tuning)'
  static override description = `Input [CLS] a [SEP] (b [SEP]) with segment ids 0/1, cut to --max-len by BERT's truncate_seq_pair;
the pooled [CLS] vector (tanh(dense(h[CLS]))) → dropout → classifier Linear(H→C) (BERT §4.1, Hugging Face
BertForSequenceClassification); STS-B is regression (one output, mean squared error), the others softmax
cross-entropy. AdamW (β 0.9/0.999, ε 1e-8, weight decay 0.01 except biases and LayerNorm), linear warm-up over
--warmup-proportion of the steps then linear decay, gradient clipping at --clip.
--span-ft --dict D adds Span Fine-tuning (Bao et al. §3): every sentence is segmented with the n-gram dictionary
(span segment-ngrams --build), the token vectors are grouped into at most --max-spans spans of at most
--max-span-tokens tokens, Conv1d(H→H, k 3)+ReLU+max-pool runs over each span's tokens, a second over the spans,
and the sentence vector is concatenated with the pooled [CLS] vector (classifier Linear(2H→C)).
--init is a span checkpoint or any Hugging Face BERT (config.json + model.safetensors + vocab.txt); --preset
starts from a random model instead. Tokenizer casing comes from the checkpoint (tokenizer_config.json, else the
vocabulary). stdout: {step, epoch, loss, lr} every --log-every steps; after each epoch with --dev
{"split":"dev", epoch, step, <the task's metrics>, score, best}. --out receives the best checkpoint by the
task's score (the latest without --dev): config.json (num_labels, id2label, label2id, problem_type, span_ft),
model.safetensors, vocab.txt, tokenizer_config.json, finetune_config.json and, with --span-ft, the dictionary.`
  static override examples = [
    'span finetune glue --task sst2 --init ckpt --train SST-2/train.tsv --dev SST-2/dev.tsv --out sst2-ckpt',
    'span finetune glue --task mrpc --init ckpt --train MRPC/train.tsv --dev MRPC/dev.tsv --span-ft --dict ngrams.txt --out mrpc-sf',
  ]
  static override flags = {
    task: Flags.string({description: `GLUE task (${GLUE_TASK_NAMES.join(', ')}; case and hyphens ignored)`, required: true}),
    init: Flags.string({description: 'checkpoint directory to start from (span or Hugging Face BERT)', exclusive: ['preset']}),
    preset: Flags.string({description: 'start from a randomly initialised model of this size instead of --init', options: Object.keys(PRESETS)}),
    vocab: Flags.string({description: 'vocabulary of a --preset model (default: the embedded one)', dependsOn: ['preset']}),
    train: Flags.string({description: 'training TSV (as distributed in glue_data/<TASK>/train.tsv)', required: true}),
    dev: Flags.string({description: 'dev TSV: scored after every epoch; the best score is kept'}),
    out: Flags.string({description: 'output checkpoint directory', required: true}),
    cased: Flags.boolean({description: 'keep case and accents (overrides the checkpoint)', exclusive: ['uncased']}),
    uncased: Flags.boolean({description: 'lowercase and strip accents (overrides the checkpoint)', exclusive: ['cased']}),
    'max-len': Flags.integer({description: 'max_seq_length: tokens per example', default: 128, min: 4}),
    lr: numberFlag('peak learning rate', {default: 2e-5, min: 0}),
    'warmup-proportion': numberFlag('share of the steps spent warming up', {default: 0.1, min: 0}),
    'weight-decay': numberFlag('AdamW decoupled weight decay', {default: 0.01, min: 0}),
    clip: numberFlag('gradient clipping: largest global L2 norm (0: off)', {default: 1.0, min: 0}),
    epochs: Flags.integer({description: 'passes over the training set', default: 3, min: 1}),
    'batch-size': Flags.integer({description: 'examples per step (and per inference batch)', default: 32, min: 1}),
    seed: Flags.integer({description: 'seed of the new layers, the order and dropout', default: 1, min: 0}),
    ...backendFlags(),
    'log-every': Flags.integer({description: 'steps per metrics record', default: 10, min: 1}),
    dropout: numberFlag('hidden and attention dropout (default: the checkpoint\'s or preset\'s, 0.1)', {min: 0, max: 0.999}),
    'span-ft': Flags.boolean({description: 'Span Fine-tuning (Bao et al. §3): the span CNN beside [CLS]', dependsOn: ['dict']}),
    dict: Flags.string({description: 'n-gram dictionary (span segment-ngrams --build) for --span-ft'}),
    'max-spans': Flags.integer({description: 'r: spans per example (§4.1: 16)', default: 16, min: 1}),
    'max-span-tokens': Flags.integer({description: 'l: tokens per span', default: 8, min: 1}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneGlue)
    if (!flags.init && !flags.preset) throw new SpanError('give --init CHECKPOINT (or --preset NAME for a randomly initialised model)')
    if (flags.init && !(await isCheckpoint(flags.init))) throw new SpanError(`${flags.init}: not a checkpoint directory (no config.json)`)
    if (flags.dict && !flags['span-ft']) throw new SpanError('--dict is for --span-ft')
    const task = glueTask(flags.task)
    const dict = flags['span-ft'] ? await readNgramDict(await openSource(flags.dict as string)) : null
    const vocab = loadVocab(flags.init ? join(flags.init, VOCAB_FILE) : (flags.vocab ?? DEFAULT_VOCAB))
    const cased = flags.cased ? true : flags.uncased ? false : vocab.cased
    const config = runConfig(flags, task, cased)
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !cased}), {maxLen: config['max-len'], dict})
    const train = await readFeatures(flags.train, task, fz)
    const dev = flags.dev ? await readFeatures(flags.dev, task, fz) : null
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const model = await this.model(flags, config, task, vocab)
    setDropout(model.config, flags.dropout) // issue 14
    try {
      const out = new LineWriter(process.stdout)
      const log = (line: string) => process.stderr.write(`${LOG}: ${line}\n`)
      log(`config: ${JSON.stringify(config)}`)
      logParams(model, log)
      await finetuneGlue({config, task, model, padId: vocab.special.pad, vocabPath: vocab.info.path, train, dev}, {out, log, progress: lineProgress(LOG)})
      await out.end()
    } finally {
      model.dispose()
    }
  }

  /** The model to fine-tune, checked against the vocabulary and --max-len. */
  private async model(flags: {init?: string; preset?: string}, c: GlueFinetuneConfig, task: GlueTask, vocab: Vocab): Promise<BertForSequenceClassification> {
    const head = headFor(task, c)
    let model: BertForSequenceClassification
    if (flags.init) {
      const loaded = await loadClassifier(flags.init, head, c.seed)
      model = loaded.model
      if (loaded.initialised.length) process.stderr.write(`${LOG}: initialised ${loaded.initialised.join(', ')}\n`)
      if (loaded.ignored.length) process.stderr.write(`${LOG}: ignored ${loaded.ignored.length} checkpoint tensors (${loaded.ignored.slice(0, 3).join(', ')}${loaded.ignored.length > 3 ? ', …' : ''})\n`)
    } else {
      const config: BertConfig = presetConfig(flags.preset as PresetName, vocab.tokens.length, {pad_token_id: vocab.special.pad, max_position_embeddings: Math.max(512, c['max-len'])})
      model = BertForSequenceClassification.init(config, head, c.seed)
    }
    const why = misfit(model.config, vocab, c, flags.init ?? 'the model')
    if (why) {
      model.dispose()
      throw new SpanError(why)
    }
    return model
  }
}

function runConfig(flags: Record<string, unknown>, task: GlueTask, cased: boolean): GlueFinetuneConfig {
  const f = flags as Record<string, never>
  return {
    task: task.name, init: flags.init ? String(flags.init) : `preset:${String(flags.preset)}`, train: f.train, dev: f.dev ?? null, out: f.out,
    cased, 'max-len': f['max-len'], lr: f.lr, 'warmup-proportion': f['warmup-proportion'], 'weight-decay': f['weight-decay'], clip: f.clip,
    epochs: f.epochs, 'batch-size': f['batch-size'], seed: f.seed, backend: f.backend, threads: f.threads ?? null, 'log-every': f['log-every'],
    'span-ft': Boolean(flags['span-ft']), dict: f.dict ?? null, 'max-spans': f['max-spans'], 'max-span-tokens': f['max-span-tokens'],
  }
}

function headFor(task: GlueTask, c: GlueFinetuneConfig): HeadConfig {
  const labels = task.labels ? [...task.labels] : []
  const span_ft = c['span-ft'] ? {max_spans: c['max-spans'], max_span_tokens: c['max-span-tokens']} : null
  return {num_labels: task.labels ? labels.length : 1, labels, finetuning_task: task.name, span_ft}
}

/** Reads a labelled TSV and encodes it; a test file (no labels) or an empty one is an error. */
async function readFeatures(path: string, task: GlueTask, fz: GlueFeaturizer): Promise<GlueFeature[]> {
  const src = await openSource(path)
  const {examples, labeled} = await readGlueFile(src, task)
  if (examples.length === 0) throw new SpanError(`${src.name}: no examples`)
  if (!labeled) throw new SpanError(`${src.name}: no ${task.name} labels in this file (a test file?); training and dev need labels`)
  return examples.map((ex) => fz.feature(ex))
}

function misfit(m: BertConfig, vocab: Vocab, c: GlueFinetuneConfig, source: string): string | null {
  if (c['max-len'] > m.max_position_embeddings) return `--max-len ${c['max-len']} exceeds ${source}'s ${m.max_position_embeddings} positions (max_position_embeddings)`
  if (vocab.tokens.length > m.vocab_size) return `${vocab.info.path} has ${vocab.tokens.length} entries, ${source} only ${m.vocab_size} (vocab_size)`
  return null
}

function logParams(model: BertForSequenceClassification, log: (line: string) => void): void {
  const total = model.params.size()
  if (!model.head.span_ft) return log(`${total} parameters`)
  const x = spanFtExtraParams(model.config.hidden_size, model.head.num_labels)
  log(`${total} parameters; Span Fine-tuning adds ${x.total} (convolutions ${x.convs}, classifier ${x.classifier}), ${((100 * x.total) / total).toFixed(2)}% of the model`)
}
