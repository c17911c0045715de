import {Flags} from '@oclif/core'
import {SpanCommand} from '../../base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {BertForSequenceClassification, type HeadConfig, loadClassifier} from '../../core/model/classifier.js'
import {type BertConfig, type PresetName, presetConfig} from '../../core/model/config.js'
import {spanFtExtraParams} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {GLUE_TASK_NAMES, type GlueTask, glueTask} from '../../core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, glueAdapter, readGlueFeatures} from '../../core/tasks/glue/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import type {Vocab} from '../../core/text/vocab.js'
import {finetuneFlags, lockRun, loopSettings, modelSource, runLoop, runVocab} from '../../finetune-flags.js'

const log = (line: string) => process.stderr.write(`span finetune glue: ${line}\n`)

export default class FinetuneGlue extends SpanCommand {
  static override summary = 'Fine-tune a BERT/SpanBERT encoder on a GLUE task (optionally with Span Fine-tuning)'
  static override description = `Input [CLS] a [SEP] (b [SEP]) with segment ids 0/1, cut to --max-len by BERT's truncate_seq_pair;
the pooled [CLS] vector → dropout → classifier Linear(H→C) (BERT §4.1, Hugging Face BertForSequenceClassification);
STS-B is regression (mean squared error), the others softmax cross-entropy. The fine-tuning loop every task shares:
AdamW (β 0.9/0.999, ε 1e-8, weight decay except biases and LayerNorm), linear warm-up over --warmup-proportion then
linear decay, clipping at --clip, --accumulate micro-batches per step, dev scored at each epoch's end (and every
--eval-every steps). --span-ft --dict D adds Span Fine-tuning (Bao et al. §3): sentences segmented with the n-gram
dictionary (span segment-ngrams --build) into at most --max-spans spans of at most --max-span-tokens tokens, a
Conv1d+max-pool over each span's tokens and another over the spans, concatenated with the pooled [CLS] vector.
stdout: {step, epoch, loss, lr, grad_norm, tokens_per_s} every --log-every steps; {"split":"dev", epoch, step,
<the task's metrics>, score, best}; {step, checkpoint}. --out DIR receives best/ (by the task's score; the latest
without --dev) and the newest --keep checkpoint-STEP/ for --resume.`
  static override examples = [
    'span finetune glue --task sst2 --init ckpt --train SST-2/train.tsv --dev SST-2/dev.tsv --out sst2-run',
    'span finetune glue --task mrpc --init ckpt --train MRPC/train.tsv --dev MRPC/dev.tsv --span-ft --dict ngrams.txt --out mrpc-sf',
  ]
  static override flags = {
    ...finetuneFlags({lr: 2e-5, maxLen: 128, minLen: 4, unit: 'example'}),
    task: Flags.string({description: `GLUE task (${GLUE_TASK_NAMES.join(', ')}; case and hyphens ignored)`, required: true}),
    train: Flags.string({description: 'training TSV (as distributed in glue_data/<TASK>/train.tsv)', required: true}),
    dev: Flags.string({description: 'dev TSV: scored at each evaluation; the best score is kept in best/'}),
    'span-ft': Flags.boolean({description: 'Span Fine-tuning (Bao et al. §3): the span CNN beside [CLS]', dependsOn: ['dict']}),
    dict: Flags.string({description: 'n-gram dictionary (span segment-ngrams --build) for --span-ft'}),
    'max-spans': Flags.integer({description: 'r: spans per example (§4.1: 16)', default: 16, min: 1}),
    'max-span-tokens': Flags.integer({description: 'l: tokens per span', default: 8, min: 1}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneGlue)
    const src = await modelSource(flags, log)
    if (flags.dict && !flags['span-ft']) throw new SpanError('--dict is for --span-ft')
    const lock = await lockRun(flags.out, log) // a second writer, or a file in the way, fails now
    const task = glueTask(flags.task)
    const dict = flags['span-ft'] ? await readNgramDict(await openSource(flags.dict as string)) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config: GlueFinetuneConfig = {...loopSettings(flags, task.name, cased), 'span-ft': flags['span-ft'], dict: flags.dict ?? null, 'max-spans': flags['max-spans'], 'max-span-tokens': flags['max-span-tokens']}
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !cased}), {maxLen: config['max-len'], dict})
    const train = await readGlueFeatures(flags.train, task, fz)
    const dev = flags.dev ? await readGlueFeatures(flags.dev, task, fz) : null
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const model = await loadModel(src.dir, flags.preset, config, task, vocab)
    try {
      log(`config: ${JSON.stringify(config)}`)
      logParams(model)
      await runLoop(glueAdapter({config, task, model, padId: vocab.special.pad, vocabPath: vocab.info.path, train, dev}), config, src, flags, log, ['span-ft', 'max-spans', 'max-span-tokens'])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}

/** The model to fine-tune (a checkpoint's, else a fresh --preset one), checked against the vocabulary and --max-len. */
async function loadModel(dir: string | null, preset: string | undefined, c: GlueFinetuneConfig, task: GlueTask, vocab: Vocab): Promise<BertForSequenceClassification> {
  const span_ft = c['span-ft'] ? {max_spans: c['max-spans'], max_span_tokens: c['max-span-tokens']} : null
  const head: HeadConfig = {num_labels: task.labels ? task.labels.length : 1, labels: task.labels ? [...task.labels] : [], finetuning_task: task.name, span_ft}
  let model: BertForSequenceClassification
  if (dir) {
    const loaded = await loadClassifier(dir, head, c.seed)
    model = loaded.model
    if (loaded.initialised.length) log(`initialised ${loaded.initialised.join(', ')}`)
    if (loaded.ignored.length) log(`ignored ${loaded.ignored.length} checkpoint tensors (${loaded.ignored.slice(0, 3).join(', ')}${loaded.ignored.length > 3 ? ', …' : ''})`)
  } else {
    const config: BertConfig = presetConfig(preset as PresetName, vocab.tokens.length, {pad_token_id: vocab.special.pad, max_position_embeddings: Math.max(512, c['max-len'])})
    model = BertForSequenceClassification.init(config, head, c.seed)
  }
  const m = model.config
  const why = c['max-len'] > m.max_position_embeddings ? `--max-len ${c['max-len']} exceeds ${dir ?? 'the model'}'s ${m.max_position_embeddings} positions (max_position_embeddings)`
    : vocab.tokens.length > m.vocab_size ? `${vocab.info.path} has ${vocab.tokens.length} entries, ${dir ?? 'the model'} only ${m.vocab_size} (vocab_size)` : null
  if (why) {
    model.dispose()
    throw new SpanError(why)
  }
  return model
}

function logParams(model: BertForSequenceClassification): void {
  const total = model.params.size()
  if (!model.head.span_ft) {
    log(`${total} parameters`)
    return
  }
  const x = spanFtExtraParams(model.config.hidden_size, model.head.num_labels)
  log(`${total} parameters; Span Fine-tuning adds ${x.total} (convolutions ${x.convs}, classifier ${x.classifier}), ${((100 * x.total) / total).toFixed(2)}% of the model`)
}
