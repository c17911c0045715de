import {Args, Flags} from '@oclif/core'
import {SpanCommand, ioFlags, numberFlag, unblockStdout} from '../cli/base.js'
import {backendFlags} from '../cli/backend-flags.js'
import {lossScaleFlags} from '../cli/loss-scale-flags.js'
import {batchFlags} from '../cli/batch-flags.js'
import {MAX_BATCH} from '../cli/limits.js'
import {PRESETS} from '../core/model/config.js'
import {MASK_SCHEMES, TAG_FILLS} from '../core/data/mask.js'
import {SpanError, UsageError} from '../core/stream/errors.js'
import {launchRank} from '../core/util/launch.js'
import {resolvePretrainRun} from '../core/train/config.js'
import {pretrain} from '../core/train/loop.js'
import {patientMetrics} from '../core/train/metrics-out.js'
import {makeProgress} from '../core/train/progress.js'
import {type RunDir, modelDir, planRunDir, resumeDir, runDirOf} from '../core/train/run-dir.js'
import {signalExitCode} from '../core/train/signals.js'
import {TRAINER_STATE_FILE} from '../core/train/state.js'
import {metricsLoss} from '../core/util/fs-errors.js'

export default class Pretrain extends SpanCommand {
  static override summary = 'Pre-train a SpanBERT (or BERT) encoder on masked examples or blocks; metrics NDJSON on stdout'
  static override description = `Reads masked examples (span mask) or blocks (span block; then masks them itself, a fresh mask
every epoch, with --scheme/--p/--max-span/--ratio/--tagged-prob/--tag-labels/--fill as span mask has them). Examples are drawn uniformly at
random without replacement within an epoch, through a byte-offset index of the file (built in one pass; a
data set larger than memory trains). Objectives mlm,sbo (SpanBERT, default), mlm, or mlm,nsp (BERT; needs
span block --pairs). AdamW (β 0.9/0.999, ε 1e-8, decoupled weight decay, none on biases and LayerNorm),
linear warm-up then linear decay, gradient clipping at --clip, --accumulate micro-batches per step.
Settings come from defaults, then the resumed run's train_config.json, then --config FILE (JSON keyed by
flag names), then flags; the resolved config is printed to stderr and saved beside every checkpoint.
stdout: one record per --log-every steps {step, loss, mlm_loss, sbo_loss, mlm_acc, sbo_acc, lr,
tokens_per_s, …}, one per evaluation {"split":"eval", …}, one per checkpoint {step, checkpoint}.
--out DIR receives checkpoint-STEP/ directories (the newest --keep) of config.json, model.safetensors, vocab.txt
(Hugging Face names and layouts), optimizer.safetensors, trainer_state.json, train_config.json, and with --eval
best/, the model of the lowest evaluation loss; --resume DIR (a run or checkpoint directory) continues exactly.
Before step 1 a memory plan on stderr; a run that cannot fit is refused (README "Memory plan").
Defaults not given in this help: preset base, batch-size auto (effective batch 32), accumulate 1, max-steps 2,400,000 (SpanBERT
§4.2), lr 1e-4, warmup min(10,000, 10% of max-steps), weight-decay 0.01, clip 1.0, seed 1, log-every 10,
eval-every 1000, save-every 1000, keep 1, backend auto, scheme span, p 0.2, max-span 10, ratio 0.15, tagged-prob 0.5,
fill span (--scheme entity|noun-phrase read the blocks' tags as span mask does: docs/algorithms.md#tagged-masking).`
  static override examples = [
    'span pretrain train.ndjson --preset tiny --max-steps 1000 --eval dev.ndjson --out ckpt',
    'span pretrain blocks.ndjson --preset mini --scheme span --out ckpt --save-every 500',
    'span pretrain --resume ckpt --max-steps 2000',
  ]
  static override args = {file: Args.string({description: 'training data file (instead of --input)', ignoreStdin: true})}
  static override flags = {
    ...ioFlags,
    out: Flags.string({description: 'run directory, new or empty (default: a new runs/pretrain-YYYYmmdd-HHMMSS/; with --resume, the resumed one)'}),
    resume: Flags.string({description: 'continue the run saved in this checkpoint directory'}),
    init: Flags.string({
      description: 'start from these weights (BERT/SpanBERT: safetensors, pytorch_model.bin, sharded; a run directory: its best/, else newest checkpoint): fresh optimiser and schedule',
    }),
    config: Flags.string({description: 'JSON file of settings keyed by flag names (under the flags given here)'}),
    eval: Flags.string({description: 'held-out file (masked examples or blocks) evaluated every --eval-every steps and at the end'}),
    vocab: Flags.string({description: 'vocabulary of a headerless stream, or of an --init checkpoint without vocab.txt'}),
    preset: Flags.string({description: 'model size', options: Object.keys(PRESETS)}),
    layers: Flags.integer({description: 'number of layers (over the preset)', min: 1}),
    hidden: Flags.integer({description: 'hidden size (over the preset; intermediate 4×)', min: 1}),
    heads: Flags.integer({description: 'attention heads (over the preset)', min: 1}),
    intermediate: Flags.integer({description: 'feed-forward size (over the preset)', min: 1}),
    'max-len': Flags.integer({description: 'longest sequence accepted (default: the model\'s max_position_embeddings, 512)', min: 3}),
    objectives: Flags.string({description: 'mlm,sbo | mlm | mlm,nsp | mlm,sbo,nsp'}),
    lr: numberFlag('peak learning rate'),
    warmup: Flags.integer({description: 'warm-up steps', min: 0}),
    'weight-decay': numberFlag('AdamW decoupled weight decay'),
    clip: numberFlag('gradient clipping: largest global L2 norm (0: off)'),
    ...batchFlags(),
    accumulate: Flags.integer({description: 'micro-batches whose gradients make one step', min: 1, max: MAX_BATCH}),
    'max-steps': Flags.integer({description: 'steps of the run (the learning-rate schedule ends there)', min: 1}),
    'stop-at': Flags.integer({description: 'end this invocation at this step (checkpointed; resume later), schedule unchanged', min: 1}),
    seed: Flags.integer({description: 'seed of initialisation, order, masks and dropout', min: 0}),
    'log-every': Flags.integer({description: 'steps per metrics record', min: 1}),
    'eval-every': Flags.integer({description: 'steps between evaluations', min: 1}),
    'save-every': Flags.integer({description: 'steps between checkpoints (checkpoint-STEP/ in --out)', min: 1}),
    keep: Flags.integer({description: 'checkpoint-STEP/ directories kept, the newest (best/, by evaluation loss, besides)', min: 1}),
    tensorboard: Flags.string({description: 'write TensorBoard event files (losses, learning rate, gradient norm, evaluations) here'}),
    ...backendFlags(null),
    ...lossScaleFlags(false),
    scheme: Flags.string({description: 'masking scheme for blocks', options: [...MASK_SCHEMES]}),
    p: numberFlag('geometric span-length parameter (blocks, span scheme)'),
    'max-span': Flags.integer({description: 'longest span in words (blocks, span scheme)', min: 1}),
    ratio: numberFlag('share of each block\'s tokens to mask (blocks)'),
    'tagged-prob': numberFlag('entity, noun-phrase (blocks): chance that a draw masks a whole tagged span'),
    'tag-labels': Flags.string({description: 'entity, noun-phrase (blocks): comma-separated tag labels to mask (default: NP for noun-phrase, all others for entity)'}),
    fill: Flags.string({description: 'entity, noun-phrase (blocks): the other draws, geometric spans (the reference code) or whole words (the paper)', options: [...TAG_FILLS]}),
    dropout: numberFlag('hidden and attention dropout (default: the model config\'s, 0.1)', {min: 0, max: 0.999}),
  }

  async run(): Promise<void> {
    const {args, flags} = await this.parse(Pretrain)
    if (flags.resume && flags.init) throw new UsageError('give --resume or --init, not both (--resume continues a run, --init starts one from weights)')
    const log = (line: string) => process.stderr.write(`span pretrain: ${line}\n`)
    const out0 = flags.out ?? (flags.resume ? runDirOf(flags.resume) : undefined)
    const planned = await planRunDir({out: out0, kind: 'pretrain', resume: flags.resume ?? null, init: flags.init ?? null, log}) // checked; made and locked by open()
    let run: RunDir | null = null
    const {out} = planned
    const metrics = metricsLoss(log, out)
    let signal: string | null = null
    const writer = launchRank() === 0 // data-parallel: rank 0 alone writes --out and -o
    try {
      if (flags.init) flags.init = modelDir(flags.init, log) // a run directory: its best/, else its newest checkpoint
      const resume = flags.resume ? await resumeDir(flags.resume, TRAINER_STATE_FILE) : null
      const resolved = resolvePretrainRun(args.file, flags, resume)
      const config = {...resolved.config, out}
      if ((config.input === '-' || config.input === '') && process.stdin.isTTY) throw new SpanError('give the training data: a file, or a pipe on stdin')
      unblockStdout() // the metrics never hold the loop (a stop signal is seen at its step)
      const open = async () => (run = await planned.open()).out
      await this.withOutput(writer ? flags.output : '-', async (w) => {
        signal = await pretrain({config, out, resume, stopAt: flags['stop-at'] ?? null, inherited: resolved.inherited, open}, {out: patientMetrics(w, log), log, progress: makeProgress()})
      }, metrics.onFail).catch((err) => Promise.reject(metrics.explain(err)))
    } finally {
      ;(run as RunDir | null)?.release()
    }
    metrics.check()
    if (signal) process.exitCode = signalExitCode(signal, launchRank()) // checkpointed, but not finished
  }
}
