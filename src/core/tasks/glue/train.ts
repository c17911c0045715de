/**
 * `span finetune glue`: BERT's sentence(-pair) fine-tuning (BERT §4.1, run_classifier.py; Bao et
 * al. §4.1 for Span Fine-tuning): AdamW, linear warm-up over --warmup-proportion of the steps
 * then linear decay, gradient clipping at --clip; after every epoch the dev set is scored with
 * the task's metric and the checkpoint with the best score is kept (the latest without --dev).
 */
import * as tf from '@tensorflow/tfjs'
import {gradsByName} from '../../train/step.js'
import {DataParallel} from '../../dist/data-parallel.js'
import {copyFile, writeFile} from 'node:fs/promises'
import type {Rng} from '../../data/rng.js'
import type {GlueScores} from '../../metrics/glue-score.js'
import {VOCAB_FILE, writeFilesAtomically} from '../../model/checkpoint.js'
import {type BertForSequenceClassification, type ClsHostBatch, classifierFiles} from '../../model/classifier.js'
import type {ForwardContext} from '../../model/layers.js'
import type {LineWriter} from '../../stream/writer.js'
import {ADAMW_DEFAULTS, AdamW, clipByGlobalNorm} from '../../train/optim.js'
import {STREAM, deriveRng, permutation} from '../../train/sampler.js'
import {LinearSchedule} from '../../train/schedule.js'
import {type GlueFeature, collateGlue} from './features.js'
import {predictValues, scoreValues, spanLimits} from './predict.js'
import type {GlueTask} from './tasks.js'

/** The resolved settings of a run, saved as finetune_config.json beside the model. */
export interface GlueFinetuneConfig {
  task: string
  init: string
  train: string
  dev: string | null
  out: string
  cased: boolean
  'max-len': number
  lr: number
  'warmup-proportion': number
  'weight-decay': number
  clip: number
  epochs: number
  'batch-size': number
  seed: number
  backend: string
  /** native backend threads; null: every core */
  threads?: number | null
  'log-every': number
  'span-ft': boolean
  dict: string | null
  'max-spans': number
  'max-span-tokens': number
}

export const FINETUNE_CONFIG_FILE = 'finetune_config.json'
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json'
/** The n-gram dictionary of a Span Fine-tuning model, copied beside it so predict needs nothing else. */
export const SPAN_FT_DICT_FILE = 'span_ft_ngrams.txt'

export interface GlueRun {
  config: GlueFinetuneConfig
  task: GlueTask
  model: BertForSequenceClassification
  padId: number
  vocabPath: string
  train: GlueFeature[]
  dev: GlueFeature[] | null
}

export interface GlueIO {
  out: LineWriter // metrics NDJSON (stdout)
  log: (line: string) => void // stderr
  progress: (step: number, total: number, loss: number) => void // stderr
}

/** run_classifier's num_train_steps (ceil of examples / batch, × epochs) and warm-up proportion. */
export function glueSchedule(c: GlueFinetuneConfig, n: number, world = 1): {sched: LinearSchedule; stepsPerEpoch: number} {
  const stepsPerEpoch = Math.ceil(n / (world * c['batch-size'])) // a step takes world × batch examples (issue 14)
  const total = stepsPerEpoch * c.epochs
  return {sched: new LinearSchedule(c.lr, Math.floor(total * c['warmup-proportion']), total), stepsPerEpoch}
}

interface EpochState {
  opt: AdamW
  dropout: Rng
  sched: LinearSchedule
  epoch: number
  step: number
  stepsPerEpoch: number
  dp: DataParallel
}

/** Trains for c.epochs; returns the best dev score (null without --dev). */
export async function finetuneGlue(run: GlueRun, io: GlueIO): Promise<number | null> {
  const dp = DataParallel.open()
  let failed: unknown
  try {
    const {threads: _t, ...same} = run.config
    dp.checkSame('resolved config or data', {config: same, train: run.train.length, dev: run.dev?.length ?? null})
    dp.broadcast(run.model.params.entries())
    return await trainGlue(run, dp.writes ? io : {...io, out: {record: async () => {}} as unknown as LineWriter, progress: () => {}}, dp)
  } catch (err) {
    failed = err
    throw err
  } finally {
    dp.finish(failed, io.log)
  }
}

async function trainGlue(run: GlueRun, io: GlueIO, dp: DataParallel): Promise<number | null> {
  const c = run.config
  const {sched, stepsPerEpoch} = glueSchedule(c, run.train.length, dp.size)
  io.log(`${run.train.length} training examples; ${stepsPerEpoch} steps per epoch, ${sched.total} steps, warm-up ${sched.warmup}`)
  const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: c['weight-decay']})
  const dropout = deriveRng(c.seed, STREAM.dropout)
  let best: number | null = null
  let step = 0
  try {
    for (let epoch = 0; epoch < c.epochs; epoch++) {
      step = await trainEpoch(run, io, {opt, dropout, sched, epoch, step, stepsPerEpoch, dp})
      if (dp.writes) best = await endOfEpoch(run, io, epoch, step, best) // rank 0 alone scores and saves
    }
  } finally {
    opt.dispose()
  }
  return best
}

/** One pass over the training set in a fresh seeded order; returns the step count after it. */
async function trainEpoch(run: GlueRun, io: GlueIO, s: EpochState): Promise<number> {
  const c = run.config
  const order = permutation(run.train.length, deriveRng(c.seed, STREAM.order, s.epoch))
  const bs = c['batch-size']
  let step = s.step
  let losses: number[] = []
  for (let k = 0; k < s.stepsPerEpoch; k++) {
    const global = order.subarray(k * bs * s.dp.size, (k + 1) * bs * s.dp.size) // one global batch of the epoch's order
    const [lo, hi] = s.dp.share(bs)
    const batch = Array.from(global.subarray(lo, hi), (i) => run.train[i]) // this rank's rows (the last batch: maybe none)
    const lr = s.sched.at(step + 1)
    const b = batch.length ? collateGlue(batch, run.padId, spanLimits(run.model), run.model.head.num_labels === 1) : null
    losses.push(optimiseStep(run, s, b, lr, batch.length / global.length))
    step++
    io.progress(step, s.sched.total, losses[losses.length - 1])
    if (step % c['log-every'] === 0 || k === s.stepsPerEpoch - 1) {
      await io.out.record({step, epoch: s.epoch + 1, loss: mean(losses), lr})
      losses = []
    }
  }
  return step
}

/** Forward, backward, clipping to --clip, one AdamW update. Returns the loss; leaves no tensors. */
function optimiseStep(run: GlueRun, s: EpochState, b: ClsHostBatch | null, lr: number, share = 1): number {
  const rng = s.dp.size > 1 ? deriveRng(run.config.seed, STREAM.dropout, s.opt.step, s.dp.rank) : s.dropout // per rank and step
  const ctx: ForwardContext = {training: true, rng}
  // the batch mean of the global batch: this rank's mean weighted by its share of the rows, summed over ranks
  const local = b ? gradsByName(run.model.params, () => (share === 1 ? run.model.loss(b, ctx) : tf.mul(run.model.loss(b, ctx), share) as tf.Scalar)) : {loss: 0, grads: new Map<string, tf.Tensor>()}
  const grads = local.grads
  s.dp.reduceGrads(run.model.params.entries(), grads)
  const loss = s.dp.sum(local.loss)
  try {
    const {scale} = clipByGlobalNorm(grads, run.config.clip > 0 ? run.config.clip : Infinity)
    s.opt.apply(run.model.params.entries(), grads, lr, scale)
    return loss
  } finally {
    tf.dispose([...grads.values()])
  }
}

/** After an epoch: score dev and keep the checkpoint if it is the best so far; without dev, keep the latest. */
async function endOfEpoch(run: GlueRun, io: GlueIO, epoch: number, step: number, best: number | null): Promise<number | null> {
  if (!run.dev) {
    await saveGlueCheckpoint(run, {epoch: epoch + 1, step})
    return null
  }
  const scores = await devScores(run)
  const improved = best === null || scores.score > best
  await io.out.record({split: 'dev', epoch: epoch + 1, step, ...scores, best: improved})
  if (improved) await saveGlueCheckpoint(run, {epoch: epoch + 1, step, dev_scores: scores})
  return improved ? scores.score : best
}

export async function devScores(run: GlueRun): Promise<GlueScores> {
  const dev = run.dev as GlueFeature[]
  const values = await predictValues(run.model, dev, run.config['batch-size'], run.padId)
  return scoreValues(run.task, dev, values)
}

/** config.json, model.safetensors, vocab.txt, tokenizer_config.json, finetune_config.json (+ the dictionary), all or nothing. */
export async function saveGlueCheckpoint(run: GlueRun, state: Record<string, unknown>): Promise<void> {
  const c = run.config
  const extra = c.dict ? [{name: SPAN_FT_DICT_FILE, write: (p: string) => copyFile(c.dict as string, p)}] : []
  await writeFilesAtomically(c.out, [
    ...(await classifierFiles(run.model)),
    {name: VOCAB_FILE, write: (p) => copyFile(run.vocabPath, p)},
    {name: TOKENIZER_CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify({do_lower_case: !c.cased, tokenizer_class: 'BertTokenizer'}, null, 2) + '\n')},
    {name: FINETUNE_CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify({...c, ...state}, null, 2) + '\n')},
    ...extra,
  ])
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1)
}

/** Progress on stderr: a line every `every` ms and at the last step. */
export function lineProgress(label: string, stream: NodeJS.WritableStream = process.stderr, every = 30_000): GlueIO['progress'] {
  let last = Date.now()
  return (step, total, loss) => {
    if (Date.now() - last < every && step !== total) return
    last = Date.now()
    stream.write(`${label}: step ${step}/${total} loss ${loss.toFixed(4)}\n`)
  }
}
