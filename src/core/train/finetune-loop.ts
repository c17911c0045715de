/**
 * The one fine-tuning loop of every task (BERT §4, run_classifier / run_squad; SpanBERT
 * appendix B): epochs → a seeded order → --accumulate micro-batches per step → clipping →
 * AdamW on a linear warm-up/decay schedule → evaluation every --eval-every steps and at each
 * epoch's end → the best checkpoint kept in best/, the newest --keep resumable checkpoint-STEP/
 * directories beside it, --patience early stopping, --stop-at and an exact --resume. What is the
 * task's own comes through a TaskAdapter (adapter.ts). Under a launcher of N processes it runs
 * data-parallel (README "Training on many processes"): each rank takes its share of N × batch
 * rows of every micro-batch of the same seeded order, weights its mean by its share, gradients
 * and losses are summed over ranks, and rank 0 alone evaluates and writes.
 */
import type * as tf from '@tensorflow/tfjs'
import {join} from 'node:path'
import {Rng} from '../util/rng.js'
import {DataParallel} from '../dist/data-parallel.js'
import {writeFilesAtomically} from '../model/checkpoint.js'
import type {ForwardContext} from '../model/layers.js'
import {sha256Of} from '../util/atomic.js'
import type {LineWriter} from '../stream/writer.js'
import type {DevScores, TaskAdapter} from './adapter.js'
import {withTensorCensus} from './census.js'
import type {FinetuneSettings} from './finetune-config.js'
import type {ScalarSink} from './metrics.js'
import {ADAMW_DEFAULTS, AdamW} from './optim.js'
import {attachScaler, lossScaleOptions, lossScaleSettings, scalerFields} from './loss-scale.js'
import {backendPrecision} from '../engine/backend.js'
import type {Progress} from './progress.js'
import {BEST_DIR, checkpointDir, rotateCheckpoints} from './run-dir.js'
import {STREAM, deriveRng, epochOrder} from './sampler.js'
import {LinearSchedule} from './schedule.js'
import {type FinetuneState, loadFinetuneState, stateFiles} from './finetune-state.js'
import {stopAdvice, watchSignals} from './signals.js'
import {type MicroBatch, optimiserStep} from './step.js'
import {DevicePeak} from './device-memory.js'
import {DeviceMetrics} from './deferred.js'
import {Tally} from './objective.js'
import {onCuda} from '../engine/cuda/optimiser.js'

export interface FinetuneIO {
  out: LineWriter // metrics NDJSON (stdout)
  log: (line: string) => void // stderr
  progress: Progress
  /** called after every step (tests: tensor counts) */
  onStep?: (step: number) => void
  /** TensorBoard (--tensorboard): every numeric field of the train and dev records */
  scalars?: ScalarSink
}

/** Where this invocation starts and stops (not part of the saved config). */
export interface FinetuneRunOptions {
  resume: string | null // a checkpoint-STEP/ directory
  stopAt: number | null
}

export interface FinetuneOutcome {
  best: number | null // the best dev metric (null without dev)
  step: number
  stopped: 'done' | 'stop-at' | 'patience' | 'signal'
  signal?: string // SIGINT, SIGTERM or SIGUSR2, when one ended the run (checkpointed)
}

/** The schedule: run_classifier's num_train_steps (ceil of units / (batch × accumulate), × epochs) and warm-up proportion. */
export function finetuneSchedule(c: FinetuneSettings, units: number, world = 1): {sched: LinearSchedule; stepsPerEpoch: number} {
  const stepsPerEpoch = Math.ceil(units / (world * c['batch-size'] * c.accumulate)) // a step takes world × batch × accumulate units
  const total = stepsPerEpoch * c.epochs
  return {sched: new LinearSchedule(c.lr, Math.floor(total * c['warmup-proportion']), total), stepsPerEpoch}
}

/** Everything the loop mutates. */
interface Loop<U, B> {
  a: TaskAdapter<U, B>
  c: FinetuneSettings
  io: FinetuneIO
  n: number // units trained on (--max-train-examples)
  opt: AdamW
  sched: LinearSchedule
  stepsPerEpoch: number
  s: FinetuneState
  dropout: Rng
  order: Uint32Array | null // of s.epoch
  dp: DataParallel
  saved: number // the step of the newest checkpoint-STEP/ this run wrote (-1: none)
}

/** Trains the adapter's task as the settings say; see the module comment. */
export async function finetune<U, B>(a: TaskAdapter<U, B>, c: FinetuneSettings, o: FinetuneRunOptions, io: FinetuneIO): Promise<FinetuneOutcome> {
  const dp = DataParallel.open(`span finetune ${a.task}`)
  let failed: unknown
  try {
    const {threads: _threads, ...same} = c
    const data = dp.size > 1 ? await sha256Of(c.train).catch(() => null) : null // the training file's bytes, not only its name
    dp.checkSame('resolved config or data', {config: same, data, units: a.units.length, tokens: a.units.reduce((t: number, u) => t + a.tokens(u), 0)})
    dp.broadcast(a.params.entries()) // rank 0's parameters (new heads are seeded alike, but one source is simpler to trust)
    const quiet = {
      out: {record: async () => {}, flush: async () => {}, stopWaiting: () => {}} as unknown as LineWriter,
      progress: {start() {}, update() {}, stop() {}},
      scalars: undefined,
    }
    return await finetuneRank(a, c, o, withTensorCensus(dp.writes ? io : {...io, ...quiet}), dp) // SPAN_DEBUG_TENSORS=1: per-step counts
  } catch (err) {
    failed = err
    throw err
  } finally {
    dp.finish(failed, io.log)
  }
}

async function finetuneRank<U, B>(
  a: TaskAdapter<U, B>,
  c: FinetuneSettings,
  o: FinetuneRunOptions,
  io: FinetuneIO,
  dp: DataParallel,
): Promise<FinetuneOutcome> {
  const n = Math.min(a.units.length, c['max-train-examples'] ?? Infinity)
  const {sched, stepsPerEpoch} = finetuneSchedule(c, n, dp.size)
  if (dp.size > 1)
    io.log(`effective batch ${dp.size * c['batch-size'] * c.accumulate}: ${dp.size} processes × --batch-size ${c['batch-size']} × --accumulate ${c.accumulate}`)
  const advice = dp.size > 1 && dp.writes ? stopAdvice() : null
  if (advice) io.log(advice)
  io.log(
    `${n} training units${n < a.units.length ? ` (of ${a.units.length}, --max-train-examples)` : ''}; ${stepsPerEpoch} steps per epoch, ${sched.total} steps, warm-up ${sched.warmup}`,
  )
  const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: c['weight-decay'], lrScale: a.lrScale?.bind(a)})
  try {
    attachScaler(opt, backendPrecision(), lossScaleOptions(lossScaleSettings(c), dp.size, c.accumulate)) // fp16: dynamic loss scaling
    const s: FinetuneState = o.resume ? await loadFinetuneState(o.resume, opt, a.params) : freshState(c)
    if (o.resume) dp.checkResumeWorld(s.world, o.resume) // another world size would not continue exactly
    s.world = dp.size
    if (o.resume) io.log(`resuming at step ${s.step} (epoch ${s.epoch + 1}, step ${s.batch} of it)`)
    const loop: Loop<U, B> = {a, c, io, n, opt, sched, stepsPerEpoch, s, dropout: Rng.fromState(s.dropout_rng), order: null, dp, saved: -1}
    return await run(loop, o.stopAt ?? Infinity)
  } finally {
    opt.dispose()
  }
}

function freshState(c: FinetuneSettings): FinetuneState {
  return {
    format: 'span-finetune-state/1',
    step: 0,
    epoch: 0,
    batch: 0,
    dropout_rng: deriveRng(c.seed, STREAM.dropout).state(),
    best: null,
    best_step: null,
    stale: 0,
  }
}

/**
 * Epochs of steps; evaluations at --eval-every and epoch ends; a checkpoint at --stop-at. SIGINT,
 * SIGTERM or SIGUSR2 (any rank's, agreed after every step) ends the run after the current step with a
 * checkpoint, as pretrain's loop does.
 */
async function run<U, B>(l: Loop<U, B>, stopAt: number): Promise<FinetuneOutcome> {
  const {c, s} = l
  l.io.progress.start(l.sched.total, s.step)
  const signal = watchSignals(() => l.io.out.stopWaiting())
  let window = newWindow()
  try {
    while (s.epoch < c.epochs) {
      if (s.batch === l.stepsPerEpoch) {
        s.epoch++
        s.batch = 0
        l.order = null
        continue
      }
      if (s.step >= stopAt) return await stopHere(l)
      await trainStep(l, window)
      const caught = l.dp.agreeStop(signal.caught)
      if (caught || s.step % c['log-every'] === 0 || s.batch === l.stepsPerEpoch) window = await logWindow(l, window)
      const endOfEpoch = s.batch === l.stepsPerEpoch
      if (endOfEpoch || (c['eval-every'] && s.step % c['eval-every'] === 0)) {
        if ((await evaluation(l)) === 'patience') return {best: s.best, step: s.step, stopped: 'patience'}
      }
      l.io.onStep?.(s.step)
      if (caught) return await stopBySignal(l, caught)
    }
    return {best: s.best, step: s.step, stopped: 'done'}
  } finally {
    window.device.dispose()
    signal.dispose()
    l.io.progress.stop()
  }
}

/** The metrics of the steps since the last record. */
interface Window {
  /** the device allocator's peak over the window's steps (cuda) */
  peak: DevicePeak
  losses: number[]
  /** cuda (one process): the steps' mean losses and the last squared norm on the device, read when logged */
  device: DeviceMetrics
  deferred: number
  tokens: number
  seconds: number
  lr: number
  gradNorm: number
}

function newWindow(): Window {
  return {losses: [], device: new DeviceMetrics(), deferred: 0, tokens: 0, seconds: 0, lr: 0, gradNorm: 0, peak: new DevicePeak()}
}

/** The step's global micro-batches of `ids`, as this rank's share of each (the last may be none). */
function microBatches<U, B>(l: Loop<U, B>, ids: Uint32Array, ctx: ForwardContext, w: Window): (() => MicroBatch)[] {
  const {a, c, dp} = l
  const global = dp.size * c['batch-size'] // rows of one global micro-batch
  const micro: (() => MicroBatch)[] = []
  const [lo, hi] = dp.share(c['batch-size'])
  for (let at = 0; at < ids.length; at += global) {
    const rows = ids.subarray(at, at + global) // one global micro-batch; this rank's rows of it (the last: maybe none)
    const units = Array.from(rows.subarray(lo, hi), (i) => a.units[i])
    const share = units.length / rows.length // the global mean: each rank's mean weighted by its share, summed over ranks
    w.tokens += units.reduce((t, u) => t + a.tokens(u), 0)
    micro.push(() =>
      units.length === 0
        ? {
            loss: () => {
              throw new Error('an empty share has no loss')
            },
            empty: true,
          }
        : {loss: () => (share === 1 ? a.loss(a.collate(units), ctx) : a.loss(a.collate(units), ctx).mul(share))},
    )
  }
  return micro
}

/** One update over the next batch × accumulate units of the epoch's order. */
async function trainStep<U, B>(l: Loop<U, B>, w: Window): Promise<void> {
  const {a, c, s, dp} = l
  const global = dp.size * c['batch-size'] // rows of one global micro-batch
  const perStep = global * c.accumulate
  l.order ??= epochOrder(l.n, c.seed, s.epoch, c['group-by-length'] ? (i) => a.tokens(a.units[i]) : null, perStep)
  const ids = l.order.subarray(s.batch * perStep, (s.batch + 1) * perStep)
  const rng = dp.size > 1 ? deriveRng(c.seed, STREAM.dropout, s.step, dp.rank) : l.dropout // per rank and step: resumable without per-rank state
  const micro = microBatches(l, ids, {training: true, rng}, w)
  const t0 = performance.now()
  const lr = l.sched.at(s.step + 1)
  const reduce = dp.size > 1 ? (g: Map<string, tf.Tensor>) => dp.reduceGrads(a.params.entries(), g) : undefined
  const r = w.peak.during(() => optimiserStep(a.params, l.opt, micro, lr, c.clip, reduce, dp.size === 1 && onCuda())) // cuda: no read during the step
  w.seconds += (performance.now() - t0) / 1000
  s.step++
  s.batch++
  s.dropout_rng = l.dropout.state()
  // cuda: the losses stay on the device until logged
  if (r.device) w.device.addStep(r.device, r.losses.length)
  else w.losses.push(dp.sum(r.losses.reduce((x, y) => x + y, 0)) / r.losses.length)
  Object.assign(w, {lr, gradNorm: r.gradNorm, deferred: w.deferred + (r.device ? 1 : 0)})
  l.io.progress.update(s.step, r.device ? null : w.losses[w.losses.length - 1], w.seconds > 0 ? w.tokens / w.seconds : null)
  await new Promise((resolve) => setImmediate(resolve))
}

async function logWindow<U, B>(l: Loop<U, B>, w: Window): Promise<Window> {
  const onDevice = new Tally()
  const gradNorm = w.device.read(onDevice) ?? w.gradNorm // deferred (cuda): the one read of these steps
  const loss = (w.losses.reduce((x, y) => x + y, 0) + onDevice.loss) / Math.max(w.losses.length + w.deferred, 1)
  const tps = w.seconds > 0 ? Math.round((10 * w.tokens) / w.seconds) / 10 : null
  await emit(
    l.io,
    {step: l.s.step, epoch: l.s.epoch + 1, loss, lr: w.lr, grad_norm: gradNorm, tokens_per_s: tps, ...scalerFields(l.opt, l.s.step), ...w.peak.field()},
    'train',
  )
  return newWindow()
}

/** A metrics record, flushed at once; with --tensorboard its numbers as scalars under `scalars`/. */
async function emit(io: FinetuneIO, rec: Record<string, unknown>, scalars?: 'train' | 'dev'): Promise<void> {
  await io.out.record(rec)
  await io.out.flush()
  if (scalars && io.scalars) {
    io.scalars.record(scalars, rec)
    await io.scalars.flush()
  }
}

/**
 * Scores dev, keeps best/ when the metric improved (every time without dev), writes the
 * resumable checkpoint-STEP/ and rotates; 'patience' when --patience evaluations passed
 * without improvement.
 */
async function evaluation<U, B>(l: Loop<U, B>): Promise<'go' | 'patience'> {
  if (!l.dp.writes) return l.dp.agreeStop(null) ? 'patience' : 'go' // rank 0 alone scores and writes; its verdict
  const verdict = await evaluateAndSave(l)
  return l.dp.agreeStop(verdict === 'patience' ? 'patience' : null) ? 'patience' : 'go'
}

async function evaluateAndSave<U, B>(l: Loop<U, B>): Promise<'go' | 'patience'> {
  const {a, s} = l
  const scores = await a.evaluate()
  const value = scores ? scores[a.metric] : null
  const improved = value === null || s.best === null || (a.higherIsBetter ? value > s.best : value < s.best)
  if (scores) {
    await emit(l.io, {split: 'dev', epoch: s.epoch + 1, step: s.step, ...scores, best: improved}, 'dev')
  }
  if (improved) {
    s.best = value
    s.best_step = s.step
    s.stale = 0
    await writeFilesAtomically(join(l.c.out, BEST_DIR), await a.files(savedState(l, scores)))
  } else {
    s.stale++
  }
  await saveCheckpoint(l, scores)
  const patience = l.c.patience ?? null
  if (patience !== null && scores && s.stale >= patience) {
    l.io.log(`no better ${a.metric} in ${s.stale} evaluations (--patience ${patience}): stopping at step ${s.step}; the best was at step ${s.best_step}`)
    return 'patience'
  }
  return 'go'
}

function savedState<U, B>(l: Loop<U, B>, scores: DevScores | null): Record<string, unknown> {
  return {epoch: l.s.epoch + 1, step: l.s.step, ...(scores ? {dev_scores: scores} : {})}
}

/** checkpoint-STEP/: the model files, the optimiser and the loop's state, in one atomic write; then rotation. */
async function saveCheckpoint<U, B>(l: Loop<U, B>, scores: DevScores | null): Promise<void> {
  const dir = checkpointDir(l.c.out, l.s.step)
  await writeFilesAtomically(dir, [...(await l.a.files(savedState(l, scores))), ...(await stateFiles(l.opt, l.s))])
  l.saved = l.s.step
  await emit(l.io, {step: l.s.step, checkpoint: dir})
  await rotateCheckpoints(l.c.out, l.c.keep ?? 1, l.s.step)
}

/** --stop-at: one checkpoint of this step (unless its evaluation just wrote it, as a signal's stop does), rank 0 writing. */
async function stopHere<U, B>(l: Loop<U, B>): Promise<FinetuneOutcome> {
  if (l.dp.writes && l.saved !== l.s.step) await saveCheckpoint(l, null)
  l.io.log(`stopped at step ${l.s.step} (--stop-at); continue with --resume ${l.c.out}`)
  return {best: l.s.best, step: l.s.step, stopped: 'stop-at'}
}

/** A signal's stop: one checkpoint of this step (unless its evaluation just wrote it), rank 0 writing. */
async function stopBySignal<U, B>(l: Loop<U, B>, signal: string): Promise<FinetuneOutcome> {
  const w = l.dp.writes
  l.io.log(`${signal} at step ${l.s.step}: ${w ? `saving a checkpoint (a second ${signal} stops without it)` : 'stopping; rank 0 saves the checkpoint'}`)
  if (w && l.saved !== l.s.step) await saveCheckpoint(l, null)
  if (w) l.io.log(`saved the checkpoint of step ${l.s.step}; continue with --resume ${l.c.out}`)
  return {best: l.s.best, step: l.s.step, stopped: 'signal', signal}
}
