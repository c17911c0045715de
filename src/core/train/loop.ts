import type * as tf from '@tensorflow/tfjs'
import {writeFile} from 'node:fs/promises'
import {join} from 'node:path'
import {Rng} from '../util/rng.js'
import {DataParallel} from '../dist/data-parallel.js'
import {type BackendInfo, type BackendChoice, backendPrecision, initBackend} from '../engine/backend.js'
import {cudaGraphRequested, graphStep, graphSummary} from '../engine/cuda/graph.js'
import {type HostBatch, type MaskedExample, collate, disposeBatch, padTargets, toTensors} from '../model/batch.js'
import {type BertConfig} from '../model/config.js'
import {checkpointVocab, loadCheckpoint, saveCheckpoint, verifyManifest} from '../model/checkpoint.js'
import type {ForwardContext} from '../model/layers.js'
import {SpanBertForPreTraining} from '../model/pretraining.js'
import {checkModelFits} from '../model/size.js'
import {SpanError} from '../stream/errors.js'
import type {LineWriter} from '../stream/writer.js'
import {type FileHook, STATE_FORMAT, type TrainerState, checkTrainerState, saveTrainingCheckpoint} from './checkpointing.js'
import {withTensorCensus} from './census.js'
import {TRAIN_CONFIG_FILE, type TrainConfig, resolveWarmup} from './config.js'
import {type EvalSetup, checkEvalFile, evaluate} from './eval.js'
import {ExampleMaker} from './examples.js'
import {checkFingerprint} from './index-file.js'
import {type ScalarSink, evalRecord, openScalars, trainRecord} from './metrics.js'
import {BEST_DIR, checkpointDir, rotateCheckpoints} from './run-dir.js'
import {Tally} from './objective.js'
import {ADAMW_DEFAULTS, AdamW} from './optim.js'
import {attachScaler, lossScaleOptions, scalerFields} from './loss-scale.js'
import {type MicroBatch, optimiserStep, pretrainLoss, pretrainLossOnDevice} from './step.js'
import {DeviceMetrics} from './deferred.js'
import {onCuda} from '../engine/cuda/optimiser.js'
import {type Progress, speedNote} from './progress.js'
import {stopAdvice, watchSignals} from './signals.js'
import {EpochSampler, STREAM, deriveRng} from './sampler.js'
import {LinearSchedule} from './schedule.js'
import {type TrainData, freshModelConfig, initModelConfig, prepareData, resumedModelConfig, withDropout} from './setup.js'
import {loadTrainingState} from './state.js'
import {planRun} from './run-plan.js'
import type {MemoryPlan} from './memory-plan.js'
import {DevicePeak} from './device-memory.js'

/** Where a run's output goes, and hooks for tests. */
export interface TrainIO {
  out: LineWriter // metrics NDJSON (stdout)
  log: (line: string) => void // stderr
  progress: Progress
  onStep?: (step: number) => void
  fileHook?: FileHook
  scalars?: ScalarSink // TensorBoard (--tensorboard)
}

/** A run: its resolved config, where to save, and where to resume from. */
export interface RunSpec {
  config: TrainConfig
  out: string
  resume: string | null
  stopAt: number | null // end this run at this step (the schedule still runs to max-steps)
  inherited?: readonly string[] // settings only the resumed run's saved config gave (config.ts resolvePretrainRun)
  open?: () => Promise<string> // takes the run directory (run-dir.ts planRunDir) once all is read and planned; returns its path
}

/** Everything the loop mutates. */
interface Run {
  spec: RunSpec
  c: TrainConfig
  data: TrainData
  model: SpanBertForPreTraining
  opt: AdamW
  sampler: EpochSampler
  maker: ExampleMaker
  dropout: Rng
  step: number
  sched: LinearSchedule
  evalSetup: EvalSetup | null
  backend: BackendInfo
  bestLoss: number | null // the lowest evaluation loss so far (best/)
  dp: DataParallel // this rank's share, collectives, rank 0 writes (README "Training on many processes")
  plan: MemoryPlan // said before step 1; checked against the peak at the end
  planNotes: string[] // its lines on stderr
}

/**
 * `span pretrain`: sets up (fresh or resumed), trains to max-steps (or stop-at), saves.
 * Returns the signal that ended the run early (checkpointed), else null.
 */
export async function pretrain(spec: RunSpec, io: TrainIO): Promise<string | null> {
  const dp = DataParallel.open('span pretrain')
  let run: Run | null = null
  let failed: unknown
  try {
    run = await setUp(spec, io.log, dp)
    if (spec.open) spec.out = run.c.out = await spec.open() // every check passed, the memory planned: now the directory
    startRanks(run)
    if (!dp.writes) io = {...io, out: quietOut(), progress: quietProgress()}
    io = withTensorCensus(io) // SPAN_DEBUG_TENSORS=1
    describe(run, io)
    const scalars = io.scalars ?? (await openScalars(dp.writes ? spec.config.tensorboard : null))
    try {
      return await trainLoop(run, {...io, scalars})
    } finally {
      await scalars.close()
    }
  } catch (err) {
    failed = err
    throw err
  } finally {
    dp.finish(failed, io.log)
    run?.opt.dispose()
    run?.model.dispose()
    await run?.data.index.close()
  }
}

/** Every rank runs the same config on the same data, from rank 0's parameters. */
function startRanks(run: Run): void {
  const {threads: _threads, ...same} = run.c
  run.dp.checkSame('resolved config or data', {config: same, data: run.data.index.fingerprint, model: run.model.config})
  run.dp.broadcast(run.model.params.entries())
}

/** Ranks other than 0 write no metrics and no progress. */
function quietOut(): LineWriter {
  return {record: async () => {}, flush: async () => {}, stopWaiting: () => {}} as unknown as LineWriter
}

function quietProgress(): Progress {
  return {start() {}, update() {}, stop() {}}
}

/** Data first (its errors come before a backend starts), then backend, model, optimiser, state. */
async function setUp(spec: RunSpec, log: (line: string) => void, dp: DataParallel): Promise<Run> {
  const c = spec.config
  c.warmup = resolveWarmup(c)
  const init = spec.resume ? null : c.init // a resumed run's saved config names the weights it started from
  const resumed = spec.resume ? await resumedModelConfig(c, spec.resume) : init ? await initModelConfig(c, init) : null
  const initVocab = init ? await checkpointVocab(init, c.vocab ?? undefined) : null
  const data = await prepareData(c, (vocab) => fits(withDropout(resumed ?? freshModelConfig(c, vocab.tokens.length, vocab.special.pad), c.dropout)), spec.resume, initVocab)
  let backend: BackendInfo
  let plan: {plan: MemoryPlan; notes: string[]}
  try {
    const ev = evalSetupOf(c, data, data.model)
    if (ev) await checkEvalFile(ev)
    backend = await initBackend(c.backend as BackendChoice, {threads: c.threads ?? undefined, device: c.device ?? undefined, precision: c.precision ?? undefined, inherited: spec.inherited})
    c.precision = backendPrecision() // resolved: the saved config says what ran, and a resumed run keeps it
    plan = planRun(c, {model: data.model, seqLen: data.longest, ratio: c.ratio, examples: data.index.size}, backend, dp.size) // before any tensor: refuses what cannot fit
  } catch (err) {
    await data.index.close()
    throw err
  }
  const state = await startModel(spec, data, log, dp)
  const maker = new ExampleMaker(data.rules, data.maskerFor(data.rules.kind), c.seed, STREAM.mask, data.index.name)
  const sched = new LinearSchedule(c.lr, c.warmup, c['max-steps'])
  return {spec, c, data, ...state, maker, sched, evalSetup: evalSetupOf(c, data, state.model.config), backend, dp, plan: plan.plan, planNotes: plan.notes}
}

/** The model config, once checked to fit in memory (before any tensor is made). */
function fits(m: BertConfig): BertConfig {
  checkModelFits(m)
  return m
}

/** A fresh model and optimiser, or the checkpoint's with the trainer state it saved. */
async function startModel(spec: RunSpec, data: TrainData & {model: BertConfig}, log: (line: string) => void, dp: DataParallel): Promise<Pick<Run, 'model' | 'opt' | 'sampler' | 'dropout' | 'step' | 'bestLoss'>> {
  const c = spec.config
  const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: c['weight-decay']})
  attachScaler(opt, backendPrecision(), lossScaleOptions(c, dp.size, c.accumulate)) // fp16: dynamic loss scaling (a resumed run's state replaces it)
  const sampler = new EpochSampler(data.index.size, c.seed)
  let model: SpanBertForPreTraining | null = null
  try {
    const fresh = {opt, sampler, dropout: deriveRng(c.seed, STREAM.dropout), step: 0, bestLoss: null}
    if (c.init && !spec.resume) return {model: await initModel(c.init, data, c.seed, log), ...fresh}
    if (!spec.resume) return {model: SpanBertForPreTraining.init(data.model, c.seed), ...fresh}
    await verifyManifest(spec.resume) // refuses a checkpoint that no single save wrote
    model = (await loadCheckpoint(spec.resume, {objectives: data.model.objectives})).model
    const state = checkTrainerState(await loadTrainingState(spec.resume, opt), spec.resume)
    dp.checkResumeWorld(state.world, spec.resume) // another world size would not continue exactly
    if (state.step >= c['max-steps']) throw new SpanError(`${spec.resume}: the run is at step ${state.step}, --max-steps is ${c['max-steps']}: nothing to train (raise --max-steps)`)
    checkMoments(opt, model, spec.resume)
    checkFingerprint(data.index.name, state.data, data.index.fingerprint)
    if (state.sampler.cursor > data.index.size) throw new SpanError(`${spec.resume}: the saved data position (${state.sampler.cursor}) lies beyond the ${data.index.size} examples of ${data.index.name}`)
    sampler.restore(state.sampler)
    return {model, opt, sampler, dropout: Rng.fromState(state.dropout_rng), step: state.step, bestLoss: state.best_eval_loss ?? null}
  } catch (err) {
    opt.dispose()
    model?.dispose()
    await data.index.close()
    throw err
  }
}

/**
 * Weights to continue pre-training from (BERT or SpanBERT, any format loadCheckpoint reads):
 * the encoder and the heads the checkpoint has are taken, the others initialised; stderr says which.
 */
async function initModel(dir: string, data: TrainData & {model: BertConfig}, seed: number, log: (line: string) => void): Promise<SpanBertForPreTraining> {
  const loaded = await loadCheckpoint(dir, {objectives: data.model.objectives, seed, vocab: data.vocabPath})
  const init = new Set(loaded.initialised)
  const taken = loaded.model.params.entries().map(([n]) => n).filter((n) => !init.has(n))
  log(`--init ${dir}: took ${taken.length} tensors (${summarise(taken)}); initialised ${loaded.initialised.length} (${summarise(loaded.initialised)}); ` +
    `ignored ${loaded.ignored.length} (${summarise(loaded.ignored)}); a fresh optimiser and schedule`)
  return loaded.model
}

/** Tensor names grouped by their module prefix (`bert.encoder.*`, `cls.predictions.*`). */
function summarise(names: string[]): string {
  if (names.length === 0) return 'none'
  const groups = new Map<string, number>()
  for (const n of names) {
    const key = n.replace(/^((?:bert|cls)\.[^.]+)\..*$/, '$1.*')
    groups.set(key, (groups.get(key) ?? 0) + 1)
  }
  return [...groups].map(([k, n]) => `${k} ×${n}`).join(', ')
}

function evalSetupOf(c: TrainConfig, data: TrainData, model: BertConfig): EvalSetup | null {
  if (!c.eval) return null
  const {kind: _kind, ...rules} = data.rules
  return {path: c.eval, rules, masker: data.maskerFor, seed: c.seed, batchSize: c['batch-size'] === 'auto' ? 1 : c['batch-size'], maxTargets: model.sbo.max_targets}
}

/** A resumed optimiser must hold one moment per parameter, of its shape. */
function checkMoments(opt: AdamW, model: SpanBertForPreTraining, dir: string): void {
  for (const [name, t] of [...opt.m, ...opt.v]) {
    const p = model.params.has(name) ? model.params.get(name) : null
    if (!p || p.shape.join(',') !== t.shape.join(',')) {
      throw new SpanError(`${dir}: optimizer.safetensors does not match the model ("${name}"); a corrupt or mismatched checkpoint`)
    }
  }
}

/** The run's config on stderr (docs/formats.md#conventions: logs on stderr, data on stdout). */
function describe(run: Run, io: TrainIO): void {
  const m = run.model.config
  io.log(`config: ${JSON.stringify(run.c)}`)
  io.log(`model: L${m.num_hidden_layers} H${m.hidden_size} A${m.num_attention_heads} I${m.intermediate_size}, ` +
    `${run.model.params.size()} parameters, objectives ${m.objectives.join(',')}; backend ${run.backend.name}; ` +
    `${run.data.index.size} ${run.data.rules.kind === 'blocks' ? 'blocks (masked dynamically, a fresh mask every epoch)' : 'masked examples'}` +
    (run.step > 0 ? `; resuming at step ${run.step}` : ''))
  for (const line of run.planNotes) io.log(line)
  const {size} = run.dp
  io.log(`effective batch ${size * microBatch(run) * run.c.accumulate}: ${size} process${size === 1 ? '' : 'es'} × --batch-size ${run.c['batch-size']} × --accumulate ${run.c.accumulate}`)
  const advice = size > 1 && run.dp.writes ? stopAdvice() : null
  if (advice) io.log(advice)
}

/**
 * The steps, with logging, evaluation and checkpoints on their schedules. SIGINT, SIGTERM or
 * SIGUSR2 ends the run after the current step, with a checkpoint (a second one kills at once).
 */
async function trainLoop(run: Run, io: TrainIO): Promise<string | null> {
  const c = run.c
  const last = Math.min(c['max-steps'], run.spec.stopAt ?? Infinity)
  let saved = run.spec.resume ? run.step : -1
  let evaluated = -1
  let window = newWindow()
  const signal = watchSignals(() => io.out.stopWaiting())
  let stop: string | null = null // a signal any rank caught, agreed after every step
  const speed = speedNote(io.log, c['max-steps'] - run.step, `backend ${run.backend.name}`)
  io.progress.start(c['max-steps'], run.step)
  try {
    while (run.step < last && !stop) {
      const t0 = performance.now()
      const lr = run.sched.at(run.step + 1)
      const r = window.peak.during(() => graphedStep(run, lr, io, window.device))
      run.step++
      window.seconds += (performance.now() - t0) / 1000
      speed.step((performance.now() - t0) / 1000)
      mergeTally(window.tally, r.tally)
      io.progress.update(run.step, r.tally.batches && !r.deferred ? r.tally.loss / r.tally.batches : null, window.tokensPerS())
      await new Promise((resolve) => setImmediate(resolve)) // lets a signal in
      stop = run.dp.agreeStop(signal.caught)
      if (run.step % c['log-every'] === 0 || run.step === last || stop) window = await logWindow(run, io, window, lr, r.gradNorm)
      if (run.evalSetup && run.step % c['eval-every'] === 0) evaluated = await runEval(run, io)
      if (run.step % c['save-every'] === 0) saved = await save(run, io)
      io.onStep?.(run.step)
    }
  } catch (err) {
    signal.dispose()
    throw err
  } finally {
    window.device.dispose()
    io.progress.stop()
  }
  // still watching during the save: a rank stopped by another's signal may get its own copy now (its second kills)
  await finishRun(run, io, {stop, saved, evaluated}).finally(() => signal.dispose())
  return stop
}

/** The record of the steps since the last one (on cuda their one read of the device), and a fresh window. */
async function logWindow(run: Run, io: TrainIO, window: StepWindow, lr: number, stepNorm: number): Promise<StepWindow> {
  const gradNorm = window.device.read(window.tally, true) ?? stepNorm // deferred (cuda): the one read of these steps; its buffer kept
  const rec = trainRecord(run.step, run.sampler.state().epoch, window.tally, run.model.config.objectives, lr, gradNorm, window.seconds)
  await emit(io, {...rec, ...scalerFields(run.opt, run.step), ...window.peak.field()}, 'train')
  return newWindow(window.device)
}

type StepWindow = ReturnType<typeof newWindow>

/** After the last step: the final evaluation and checkpoint unless done at this step, and what a stop means. */
async function finishRun(run: Run, io: TrainIO, at: {stop: string | null; saved: number; evaluated: number}): Promise<void> {
  const {stop, saved, evaluated} = at
  const w = run.dp.writes
  if (stop) io.log(`${stop} at step ${run.step}: ${w ? `saving a checkpoint (a second ${stop} stops without it${saved >= 0 ? `; the one of step ${saved} stays` : ''})` : 'stopping; rank 0 saves the checkpoint'}`)
  if (run.evalSetup && evaluated !== run.step && run.step === run.c['max-steps']) await runEval(run, io) // not at --stop-at: best/ as uninterrupted
  if (saved !== run.step) await save(run, io)
  if (stop && w) io.log(`saved the checkpoint of step ${run.step}; continue with --resume ${run.spec.out}`)
  const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)} MiB` // to the MiB: the figure to hold against the plan
  const graphs = cudaGraphRequested() && run.backend.name === 'cuda' ? graphSummary() : null
  if (graphs) io.log(graphs)
  io.log(`peak resident memory ${mib(process.resourceUsage().maxRSS * 1024)} (the memory plan said about ${mib(run.plan.total)})`)
  if (run.dp.size > 1) io.log(`all-reduce: ${((run.dp.allReduceSeconds * 1000) / Math.max(1, run.step)).toFixed(2)} ms per step (this run's steps)`)
}

/** The metrics of the steps since the last record (`device`: one per run, its buffer fixed: a graphed step's addresses stay put). */
function newWindow(device = new DeviceMetrics()): {tally: Tally; device: DeviceMetrics; seconds: number; peak: DevicePeak; tokensPerS(): number | null} {
  return {tally: new Tally(), device, seconds: 0, peak: new DevicePeak(), tokensPerS() {
    return this.seconds > 0 ? this.tally.tokens / this.seconds : null
  }}
}


/** A metrics record, flushed at once: a reader (`| jq`, a plotting script) sees each as it comes; TensorBoard too. */
async function emit(io: TrainIO, rec: Record<string, unknown>, scalars?: 'train' | 'eval'): Promise<void> {
  await io.out.record(rec)
  await io.out.flush()
  if (scalars && io.scalars) {
    io.scalars.record(scalars, rec)
    await io.scalars.flush()
  }
}

function mergeTally(into: Tally, t: Tally): void {
  for (const k of ['mlm', 'sbo', 'nsp'] as const) for (let j = 0; j < 3; j++) into.sums[k][j] += t.sums[k][j]
  into.loss += t.batches > 0 ? t.loss / t.batches : 0
  into.batches += t.batches > 0 ? 1 : 0
  into.tokens += t.tokens
}

/**
 * One optimisation step over `accumulate` micro-batches through the step every training path
 * shares (optimiserStep: mean gradient, clipping at --clip, one AdamW update) and the one
 * pre-training loss (pretrainLoss). A micro-batch without targets (blocks of special tokens
 * only) has nothing to learn from and is skipped.
 */
function oneStep(run: Run, lr: number, metrics: DeviceMetrics, shapes?: string[]): {tally: Tally; gradNorm: number; deferred: boolean} {
  const {dp} = run
  const defer = dp.size === 1 && onCuda() // cuda: no read during the step (stats, loss and norm stay on the device in `metrics`)
  const rng = dp.size > 1 ? deriveRng(run.c.seed, STREAM.dropout, run.step, dp.rank) : run.dropout // per rank and step: resumable without per-rank state
  const ctx: ForwardContext = {training: true, rng}
  const tally = new Tally()
  const micro = Array.from({length: run.c.accumulate}, () => (): MicroBatch | null => {
    const host = nextBatch(run)
    shapes?.push(`${host.B}x${host.T} mlm ${host.mlmPos.length} sbo ${host.sboLabels.length}`) // the step's work depends on each (padded on cuda)
    const real = host.targets ?? {mlm: host.mlmPos.length, sbo: host.sboLabels.length}
    const n = dp.counts({...real, rows: host.B}) // the global micro-batch's
    if (n.mlm === 0) return null // no targets anywhere: nothing to learn from (blocks of special tokens only)
    if (real.mlm === 0) return {loss: () => { throw new Error('unreachable') }, empty: true, done: () => tally.add(new Float32Array(9), 0, realTokens(host))}
    const b = toTensors(host)
    let stats: Float32Array = new Float32Array(9)
    if (defer) {
      const counted = () => ((tally.batches += 1), (tally.tokens += realTokens(host))) // the sums come from the device when logged
      return {loss: pretrainLossOnDevice(run.model, b, ctx, (s) => metrics.addStats(s), n), doneDevice: counted, dispose: () => disposeBatch(b)}
    }
    return {
      loss: pretrainLoss(run.model, b, ctx, (s) => (stats = s), n),
      done: (loss) => tally.add(stats, loss, realTokens(host)),
      dispose: () => disposeBatch(b),
    }
  })
  const reduce = dp.size > 1 ? (g: Map<string, tf.Tensor>) => dp.reduceGrads(run.model.params.entries(), g) : undefined
  const r = optimiserStep(run.model.params, run.opt, micro, lr, run.c.clip, reduce, defer)
  dp.reduceTally(tally) // the step's metrics over every rank (losses already globally normalised)
  if (r.device) metrics.addStep(r.device, tally.batches) // read when the step is logged
  return {tally, gradNorm: r.gradNorm, deferred: r.device !== undefined}
}

/**
 * oneStep, as one CUDA Graph under SPAN_CUDA_GRAPH=1 on cuda (engine/cuda/graph.ts), keyed by
 * every micro-batch's shapes (B × T, masked positions, SBO targets): steps of other shapes do
 * other work, so each shape has graphs of its own.
 */
function graphedStep(run: Run, lr: number, io: TrainIO, metrics: DeviceMetrics): {tally: Tally; gradNorm: number; deferred: boolean} {
  if (!cudaGraphRequested() || run.backend.name !== 'cuda') return oneStep(run, lr, metrics)
  const shapes: string[] = []
  const key = () => `pretrain ${shapes.join(', ')}`
  return graphStep(`pretrain batch ${microBatch(run)}`, () => oneStep(run, lr, metrics, shapes), io.log, key).result
}

/** The next --batch-size examples of the epoch order, masked (blocks) and padded. */
function nextBatch(run: Run): HostBatch {
  const examples: MaskedExample[] = []
  const [lo, hi] = run.dp.share(microBatch(run)) // this rank's rows of the global micro-batch
  for (let j = 0; j < run.dp.size * microBatch(run); j++) {
    const {index, epoch} = run.sampler.next()
    if (j >= lo && j < hi) examples.push(run.maker.make(run.data.index.read(index), index, epoch))
  }
  const m = run.model.config
  const h = collate(examples, {padId: run.data.vocab.special.pad, maxTargets: m.sbo.max_targets, maxPositions: m.max_position_embeddings})
  return padForGraphs(run, h)
}

/**
 * On cuda, the batch's MLM and SBO targets padded to B·maskBudget(T − 2, ratio) each (label −1:
 * no loss, no gradient; padTargets), the most a batch of B blocks of at most T tokens can have when
 * span pretrain masks them itself (ExampleMaker.targetBound), so that dynamic masking gives every
 * batch of a shape the same device work and a graphed step replays. Native and pre-masked data: as collated.
 */
function padForGraphs(run: Run, h: HostBatch): HostBatch {
  const bound = run.backend.name === 'cuda' ? run.maker.targetBound(h.T) : null
  return bound === null ? h : padTargets(h, h.B * bound)
}

/** --batch-size, resolved (planRun turns auto into a number before the model is made). */
function microBatch(run: Run): number {
  const b = run.c['batch-size']
  if (b === 'auto') throw new Error('--batch-size auto was not resolved')
  return b
}

function realTokens(h: HostBatch): number {
  let n = 0
  for (let i = 0; i < h.mask.length; i++) n += h.mask[i]
  return n
}

/** Evaluates, and keeps the model in best/ when its evaluation loss is the lowest so far. */
async function runEval(run: Run, io: TrainIO): Promise<number> {
  if (!run.dp.writes) return run.step // rank 0 alone evaluates and writes
  const tally = await evaluate(run.model, run.evalSetup as EvalSetup)
  const rec = evalRecord(run.step, tally, run.model.config.objectives)
  await emit(io, rec, 'eval')
  if (typeof rec.loss === 'number' && (run.bestLoss === null || rec.loss < run.bestLoss)) {
    run.bestLoss = rec.loss
    const config = {name: TRAIN_CONFIG_FILE, write: (p: string) => writeFile(p, JSON.stringify(run.c, null, 2) + '\n')}
    await saveCheckpoint(join(run.spec.out, BEST_DIR), run.model, run.data.vocabPath, [config])
  }
  return run.step
}

/** A resumable checkpoint-STEP/ directory, then the oldest beyond --keep removed. */
async function save(run: Run, io: TrainIO): Promise<number> {
  if (!run.dp.writes) return run.step // rank 0 alone writes
  const state: TrainerState = {
    format: STATE_FORMAT, step: run.step, sampler: run.sampler.state(), dropout_rng: run.dropout.state(),
    data: run.data.index.fingerprint, config: run.c, best_eval_loss: run.bestLoss, world: run.dp.size,
  }
  const dir = checkpointDir(run.spec.out, run.step)
  await saveTrainingCheckpoint(dir, run.model, run.opt, run.data.vocabPath, state, io.fileHook)
  await emit(io, {step: run.step, checkpoint: dir})
  await rotateCheckpoints(run.spec.out, run.c.keep, run.step)
  return run.step
}
