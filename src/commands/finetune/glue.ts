import {Flags} from '@oclif/core'
import {SpanCommand} from '../../base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {spanFtSettings} from '../../core/model/span-ft.js'
import {SpanError} from '../../core/stream/errors.js'
import {openSource} from '../../core/stream/lines.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {glueModel, paramsLine} from '../../core/tasks/glue/model.js'
import {glueSpanFt, shuffleTrainSpans} from '../../core/tasks/glue/span-ft.js'
import {GLUE_TASK_NAMES, glueTask} from '../../core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, SPAN_FT_KEYS, glueAdapter, readGlueFeatures} from '../../core/tasks/glue/train.js'
import {readNgramDict} from '../../core/text/ngrams.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {finetuneFlags, lockRun, loopSettings, modelSource, runLoop, runVocab} from '../../finetune-flags.js'
import {glueSpanFtFlags} from '../../span-ft-flags.js'

const log = (line: string) => process.stderr.write(`span finetune glue: ${line}\n`)

export default class FinetuneGlue extends SpanCommand {
  static override summary = 'Fine-tune a BERT/SpanBERT encoder on a GLUE task (optionally with Span Fine-tuning)'
  static override description = `Input [CLS] a [SEP] (b [SEP]) with segment ids 0/1, cut to --max-len by BERT's truncate_seq_pair;
the pooled [CLS] vector → dropout → classifier Linear(H→C) (BERT §4.1, Hugging Face BertForSequenceClassification);
STS-B is regression (mean squared error), the others softmax cross-entropy. The fine-tuning loop every task shares:
AdamW (β 0.9/0.999, ε 1e-8, weight decay except biases and LayerNorm), linear warm-up over --warmup-proportion then
linear decay, clipping at --clip, --accumulate micro-batches per step, dev scored at each epoch's end (and every
--eval-every steps). --span-ft --dict D adds Span Fine-tuning (Bao et al. §3) as its reference code computes it:
each sentence segmented with the n-gram dictionary, [CLS] and [SEP]s one-token spans, spans counted per sentence,
r spans of l tokens; Conv1d(kernel 3, padding 0) → ReLU → max-pool → dropout over each span's tokens, the same
over the spans, s concatenated with [CLS]'s raw vector (--span-ft-cls). r and l default to the reference's
run_glue.sh (r 48–128 by task, l 16), not the paper's text (r 16, l 64/128: --span-ft-defaults paper), because the
scripts are what its results ran; --segmentation random|none gives the paper's ablations.
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
    ...glueSpanFtFlags(),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(FinetuneGlue)
    const src = await modelSource(flags, log)
    const seg = flags.segmentation as 'dict' | 'random' | 'none'
    if (flags.dict && !flags['span-ft']) throw new SpanError('--dict is for --span-ft')
    if (flags['span-ft'] && !flags.dict && seg !== 'none') throw new SpanError('--span-ft needs --dict (or --segmentation none)')
    const lock = await lockRun(flags.out, log) // a second writer, or a file in the way, fails now
    const task = glueTask(flags.task)
    const dict = flags['span-ft'] && flags.dict ? await readNgramDict(await openSource(flags.dict)) : null
    const {vocab, cased} = await runVocab(flags, src.dir)
    const sf = flags['span-ft'] ? glueSpanFt({task: task.name, defaults: flags['span-ft-defaults'] as 'reference', maxSpans: flags['max-spans'], maxSpanTokens: flags['max-span-tokens'],
      padding: Number(flags['span-ft-padding']) as 0 | 1, cls: flags['span-ft-cls'] as 'raw', segmentation: seg, maxLen: flags['max-len']}) : null
    const config: GlueFinetuneConfig = {...loopSettings(flags, task.name, cased), 'span-ft': flags['span-ft'], dict: flags.dict ?? null, 'max-spans': sf?.max_spans ?? 0, 'max-span-tokens': sf?.max_span_tokens ?? 0,
      ...(sf ? {'span-ft-defaults': flags['span-ft-defaults'], 'span-ft-padding': sf.padding, 'span-ft-cls': sf.cls, segmentation: seg} : {})}
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !cased}), {maxLen: config['max-len'], dict, spanFt: sf && spanFtSettings(sf)})
    const read = await readGlueFeatures(flags.train, task, fz)
    const train = seg === 'random' && sf ? shuffleTrainSpans(read, config.seed) : read
    const dev = flags.dev ? await readGlueFeatures(flags.dev, task, fz) : null
    await initBackend(config.backend as BackendChoice, config.threads ?? undefined)
    const model = await glueModel({dir: src.dir, preset: flags.preset, task, vocab, maxLen: config['max-len'], seed: config.seed, spanFt: sf, log})
    try {
      log(`config: ${JSON.stringify(config)}`)
      log(paramsLine(model))
      await runLoop(glueAdapter({config, task, model, padId: vocab.special.pad, vocabPath: vocab.info.path, train, dev}), config, src, flags, log, [...SPAN_FT_KEYS])
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
