import {Flags} from '@oclif/core'
import {SpanCommand} from '../../cli/base.js'
import {type BackendChoice, initBackend} from '../../core/engine/backend.js'
import {spanFtSettings} from '../../core/model/span-ft.js'
import {GlueFeaturizer} from '../../core/tasks/glue/features.js'
import {glueModel, paramsLine} from '../../core/tasks/glue/model.js'
import {glueSpanDefaults, shuffleTrainSpans} from '../../core/tasks/glue/span-ft.js'
import {GLUE_TASK_NAMES, glueTask} from '../../core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, glueAdapter, readGlueFeatures} from '../../core/tasks/glue/train.js'
import {WordPieceTokenizer} from '../../core/text/tokenizer.js'
import {backendOptions, finetuneFlags, loopSettings, modelSource, openRun, runLoop, runVocab} from '../../cli/finetune-flags.js'
import {sentenceSpanFt, spanFtFlags} from '../../cli/span-ft-flags.js'

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
    task: Flags.string({description: `GLUE task (${GLUE_TASK_NAMES.join(', ')}; case and hyphens ignored)`}),
    train: Flags.string({description: 'training TSV (as distributed in glue_data/<TASK>/train.tsv)'}),
    dev: Flags.string({description: 'dev TSV: scored at each evaluation; the best score is kept in best/'}),
    ...spanFtFlags(),
  }

  async run(): Promise<void> {
    const {flags, lock} = await openRun(await this.parse(FinetuneGlue), FinetuneGlue.flags, 'glue', log, ['task', 'train']) // --resume: the saved settings; --out checked and locked (a fresh one by default), repaired
    const src = await modelSource(flags, log)
    const task = glueTask(flags.task)
    const {sf, config: sfConfig, resumeKeys, readDict} = sentenceSpanFt(flags, glueSpanDefaults(task.name), flags['max-len'])
    const dict = await readDict()
    const {vocab, cased} = await runVocab(flags, src.dir)
    const config: GlueFinetuneConfig = {...loopSettings(flags, task.name, cased), ...sfConfig}
    const fz = new GlueFeaturizer(task, new WordPieceTokenizer(vocab, {lowercase: !cased}), {maxLen: config['max-len'], dict, spanFt: sf && spanFtSettings(sf)})
    const read = await readGlueFeatures(flags.train, task, fz)
    const train = sf?.segmentation === 'random' ? shuffleTrainSpans(read, config.seed) : read
    const dev = flags.dev ? await readGlueFeatures(flags.dev, task, fz) : null
    await initBackend(config.backend as BackendChoice, backendOptions(flags, config))
    const model = await glueModel({dir: src.dir, preset: flags.preset, task, vocab, maxLen: config['max-len'], seed: config.seed, spanFt: sf, log})
    try {
      log(`config: ${JSON.stringify(config)}`)
      log(paramsLine(model))
      await runLoop(glueAdapter({config, task, model, padId: vocab.special.pad, vocabPath: vocab.info.path, train, dev}), config, src, flags, log, resumeKeys)
    } finally {
      model.dispose()
      lock.release()
    }
  }
}
