/**
 * `span finetune squad`: the start/end head and the encoder trained on SQuAD windows as
 * run_squad does (BERT §4.2; SpanBERT appendix B): AdamW, linear warm-up over a proportion of
 * the steps then linear decay, gradient clipping at 1.0, gradient accumulation; after every
 * epoch the dev set is predicted and scored by the official scorer, and the checkpoint with the
 * best F1 is kept.
 */
import * as tf from '@tensorflow/tfjs'
import {gradsByName} from '../../train/step.js'
import {DataParallel} from '../../dist/data-parallel.js'
import cliProgress from 'cli-progress'
import {copyFile, writeFile} from 'node:fs/promises'
import type {Rng} from '../../data/rng.js'
import {evaluateV1, evaluateV2, type GoldQuestion} from '../../metrics/squad.js'
import {VOCAB_FILE, writeFilesAtomically} from '../../model/checkpoint.js'
import type {ForwardContext} from '../../model/layers.js'
import {type BertForQuestionAnswering, qaModelFiles} from '../../model/qa.js'
import {SpanError} from '../../stream/errors.js'
import type {LineWriter} from '../../stream/writer.js'
import type {WordPieceTokenizer} from '../../text/tokenizer.js'
import {addGrads, scaleGrads} from '../../train/objective.js'
import {ADAMW_DEFAULTS, AdamW, clipByGlobalNorm} from '../../train/optim.js'
import {STREAM, deriveRng, permutation} from '../../train/sampler.js'
import {LinearSchedule} from '../../train/schedule.js'
import type {SquadDataset, SquadExample, SquadVersion} from './dataset.js'
import type {WindowOptions} from './features.js'
import {SquadFeaturizer} from './featurizer.js'
import {collateWindows, predictSquad} from './predict.js'

/** The resolved settings of a run, saved as finetune_config.json beside the model. */
export interface FinetuneConfig {
  task: 'squad'
  init: string
  train: string
  dev: string | null
  out: string
  version: SquadVersion
  cased: boolean
  'max-len': number
  'doc-stride': number
  'max-query-len': number
  lr: number
  'warmup-proportion': number
  'weight-decay': number
  clip: number
  epochs: number
  'batch-size': number
  accumulate: number
  seed: number
  backend: string
  /** native backend threads; null: every core */
  threads?: number | null
  'log-every': number
  'n-best': number
  'max-answer-len': number
  'null-threshold': number
}

export const FINETUNE_CONFIG_FILE = 'finetune_config.json'
export const TOKENIZER_CONFIG_FILE = 'tokenizer_config.json'

/** A training window, compact: its ids, where the passage starts, and its labels (0 = [CLS]). */
export interface TrainWindow {
  ids: Int32Array
  docOffset: number
  start: number
  end: number
}

export function windowOptions(c: FinetuneConfig): WindowOptions {
  return {maxLen: c['max-len'], docStride: c['doc-stride'], maxQueryLen: c['max-query-len']}
}

/**
 * The training windows of every question (convert_examples_to_features with is_training):
 * questions whose answer text is not found in the passage's words are skipped, as run_squad does.
 */
export function buildTrainWindows(data: SquadDataset, version: SquadVersion, tokenizer: WordPieceTokenizer, w: WindowOptions): {windows: TrainWindow[]; skipped: number} {
  const fz = new SquadFeaturizer(tokenizer, w)
  const windows: TrainWindow[] = []
  let skipped = 0
  data.examples.forEach((ex, i) => {
    if (version === '1.1') checkV1Trainable(ex, data.source)
    const r = fz.features(ex, i, true)
    if (r.answerNotFound) skipped++
    for (const f of r.features) windows.push({ids: Int32Array.from(f.ids), docOffset: f.docOffset, start: f.start, end: f.end})
  })
  if (windows.length === 0) throw new SpanError(`${data.source}: no question could be used for training (no answer found in its passage)`)
  return {windows, skipped}
}

/** run_squad: "For training, each question should have exactly 1 answer" (v1.1). */
function checkV1Trainable(ex: SquadExample, source: string): void {
  if (ex.answers.length === 0 || ex.isImpossible) {
    throw new SpanError(`${source}: question ${ex.id} has no answer, which SQuAD v1.1 training cannot use (a v2.0 dataset? use --version 2.0)`)
  }
}

/** Everything a run needs; the caller owns (and disposes) the model. */
export interface FinetuneRun {
  config: FinetuneConfig
  model: BertForQuestionAnswering
  tokenizer: WordPieceTokenizer
  vocabPath: string
  train: SquadDataset
  dev: SquadDataset | null
}

export interface FinetuneIO {
  out: LineWriter // metrics NDJSON (stdout)
  log: (line: string) => void // stderr
  progress: SquadProgress
}

/** The run's learning-rate schedule: run_squad's num_train_steps and warm-up proportion. */
export function squadSchedule(c: FinetuneConfig, nWindows: number, world = 1): {sched: LinearSchedule; stepsPerEpoch: number} {
  const stepsPerEpoch = Math.ceil(nWindows / (world * c['batch-size'] * c.accumulate)) // issue 14: world × batch per micro-batch
  const total = stepsPerEpoch * c.epochs
  return {sched: new LinearSchedule(c.lr, Math.floor(total * c['warmup-proportion']), total), stepsPerEpoch}
}

/** Trains for c.epochs; returns the best dev F1 (or null without --dev). */
export async function finetuneSquad(run: FinetuneRun, io: FinetuneIO): Promise<number | null> {
  const dp = DataParallel.open()
  let failed: unknown
  try {
    const {threads: _t, ...same} = run.config
    dp.checkSame('resolved config or data', {config: same, questions: run.train.examples.length})
    dp.broadcast(run.model.params.entries())
    const quiet = {start() {}, update() {}, stop() {}} as unknown as FinetuneIO['progress']
    return await trainSquad(run, dp.writes ? io : {...io, out: {record: async () => {}} as unknown as FinetuneIO['out'], progress: quiet}, dp)
  } catch (err) {
    failed = err
    throw err
  } finally {
    dp.finish(failed, io.log)
  }
}

async function trainSquad(run: FinetuneRun, io: FinetuneIO, dp: DataParallel): Promise<number | null> {
  const c = run.config
  const {windows, skipped} = buildTrainWindows(run.train, c.version, run.tokenizer, windowOptions(c))
  const {sched, stepsPerEpoch} = squadSchedule(c, windows.length, dp.size)
  io.log(`${run.train.examples.length} questions, ${windows.length} windows${skipped ? ` (${skipped} questions skipped: answer not found in the passage)` : ''}; ` +
    `${stepsPerEpoch} steps per epoch, ${sched.total} steps, warm-up ${sched.warmup}`)
  const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: c['weight-decay']})
  const dropout = deriveRng(c.seed, STREAM.dropout)
  let best: number | null = null
  let step = 0
  io.progress.start(sched.total)
  try {
    for (let epoch = 0; epoch < c.epochs; epoch++) {
      step = await trainEpoch(run, io, {opt, dropout, sched, windows, epoch, step, stepsPerEpoch, dp})
      if (dp.writes) best = await endOfEpoch(run, io, epoch, step, best) // rank 0 alone scores and saves
    }
  } finally {
    io.progress.stop()
    opt.dispose()
  }
  return best
}

interface EpochState {
  opt: AdamW
  dropout: Rng
  sched: LinearSchedule
  windows: TrainWindow[]
  epoch: number
  step: number
  stepsPerEpoch: number
  dp: DataParallel
}

/** One pass over the windows in a fresh seeded order; returns the step count after it. */
async function trainEpoch(run: FinetuneRun, io: FinetuneIO, s: EpochState): Promise<number> {
  const c = run.config
  const order = permutation(s.windows.length, deriveRng(c.seed, STREAM.order, s.epoch))
  const perStep = s.dp.size * c['batch-size'] * c.accumulate // global windows per step
  let step = s.step
  let losses: number[] = []
  for (let k = 0; k < s.stepsPerEpoch; k++) {
    const ids = Array.from(order.subarray(k * perStep, (k + 1) * perStep))
    const lr = s.sched.at(step + 1)
    losses.push(optimiseStep(run, s, ids.map((i) => s.windows[i]), lr))
    step++
    io.progress.update(step, losses[losses.length - 1])
    if (step % c['log-every'] === 0 || k === s.stepsPerEpoch - 1) {
      await io.out.record({step, epoch: s.epoch + 1, loss: mean(losses), lr})
      losses = []
    }
  }
  return step
}

/**
 * One update over `accumulate` micro-batches of --batch-size windows: gradients averaged over
 * the micro-batches, clipped to a global norm of --clip, one AdamW step. Returns the mean loss.
 */
function optimiseStep(run: FinetuneRun, s: EpochState, windows: TrainWindow[], lr: number): number {
  const c = run.config
  const rng = s.dp.size > 1 ? deriveRng(c.seed, STREAM.dropout, s.opt.step, s.dp.rank) : s.dropout // per rank and step
  const ctx: ForwardContext = {training: true, rng}
  const acc = new Map<string, tf.Tensor>()
  const bs = c['batch-size']
  const [lo, hi] = s.dp.share(bs)
  let total = 0
  let micro = 0
  try {
    for (let at = 0; at < windows.length; at += s.dp.size * bs) {
      const global = windows.slice(at, at + s.dp.size * bs) // one global micro-batch; this rank's rows (maybe none)
      const mine = global.slice(lo, hi)
      micro++
      if (mine.length === 0) continue
      const share = mine.length / global.length // this rank's mean weighted: the sum over ranks is the global mean
      const b = collateWindows(mine, run.tokenizer.vocab.special.pad, true)
      const r = gradsByName(run.model.params, () => (share === 1 ? run.model.loss(b, ctx) : tf.mul(run.model.loss(b, ctx), share) as tf.Scalar))
      addGrads(acc, r.grads)
      total += r.loss
    }
    scaleGrads(acc, 1 / micro)
    s.dp.reduceGrads(run.model.params.entries(), acc)
    total = s.dp.sum(total)
    const {scale} = clipByGlobalNorm(acc, c.clip > 0 ? c.clip : Infinity)
    s.opt.apply(run.model.params.entries(), acc, lr, scale)
    return total / micro
  } finally {
    tf.dispose([...acc.values()])
  }
}

/** After an epoch: score the dev set and keep the checkpoint if its F1 is the best; without dev, keep the latest. */
async function endOfEpoch(run: FinetuneRun, io: FinetuneIO, epoch: number, step: number, best: number | null): Promise<number | null> {
  if (!run.dev) {
    await saveSquadCheckpoint(run, {epoch: epoch + 1, step})
    return null
  }
  const scores = await devScores(run)
  const improved = best === null || scores.f1 > best
  await io.out.record({split: 'dev', epoch: epoch + 1, step, ...scores, best: improved})
  if (improved) await saveSquadCheckpoint(run, {epoch: epoch + 1, step, dev_scores: scores})
  return improved ? scores.f1 : best
}

/** Exact match and F1 of the dev set (the official scorer's numbers, 0–100), plus v2.0's breakdown. */
export async function devScores(run: FinetuneRun): Promise<{exact: number; f1: number} & Record<string, number>> {
  const c = run.config
  const dev = run.dev as SquadDataset
  const v2 = c.version === '2.0'
  const preds = await predictSquad(run.model, run.tokenizer, dev.examples, {
    windows: windowOptions(c), batchSize: c['batch-size'],
    decode: {nBest: c['n-best'], maxAnswerLen: c['max-answer-len'], v2, nullThreshold: c['null-threshold']},
  })
  const predictions = new Map(preds.map((p) => [p.qid, p.text]))
  const gold: GoldQuestion[] = dev.examples.map((ex) => ({id: ex.id, answers: ex.answers.map((a) => a.text)}))
  if (v2) {
    const r = evaluateV2(gold, predictions)
    return {...r, exact: r.exact, f1: r.f1}
  }
  const r = evaluateV1(gold.filter((q) => q.answers.length > 0), predictions)
  return {exact: r.exact_match, f1: r.f1}
}

/** config.json + model.safetensors + vocab.txt + tokenizer_config.json + finetune_config.json, all or nothing. */
export async function saveSquadCheckpoint(run: FinetuneRun, state: Record<string, unknown>): Promise<void> {
  const c = run.config
  await writeFilesAtomically(c.out, [
    ...(await qaModelFiles(run.model)),
    {name: VOCAB_FILE, write: (p) => copyFile(run.vocabPath, p)},
    {name: TOKENIZER_CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify({do_lower_case: !c.cased, tokenizer_class: 'BertTokenizer'}, null, 2) + '\n')},
    {name: FINETUNE_CONFIG_FILE, write: (p) => writeFile(p, JSON.stringify({...c, ...state}, null, 2) + '\n')},
  ])
}

function mean(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0) / Math.max(xs.length, 1)
}

/** Progress on stderr: a cli-progress bar when stderr is a terminal, else a line every `every` ms. */
export interface SquadProgress {
  start(total: number): void
  update(step: number, loss: number): void
  stop(): void
}

export function makeSquadProgress(stream: NodeJS.WriteStream = process.stderr, every = 30_000): SquadProgress {
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar({stream, hideCursor: true, format: 'finetune squad [{bar}] {value}/{total} steps | loss {loss} | eta {eta_formatted}'}, cliProgress.Presets.shades_classic)
    return {start: (t) => bar.start(t, 0, {loss: '-'}), update: (s, l) => bar.update(s, {loss: l.toFixed(3)}), stop: () => bar.stop()}
  }
  let total = 0
  let last = Date.now()
  return {
    start: (t) => void (total = t),
    update(s, l) {
      if (Date.now() - last < every && s !== total) return
      last = Date.now()
      stream.write(`finetune squad: step ${s}/${total} loss ${l.toFixed(4)}\n`)
    },
    stop() {},
  }
}
