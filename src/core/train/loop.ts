import * as tf from '@tensorflow/tfjs'
import {Rng} from '../data/rng.js'
import {DataParallel} from '../dist/data-parallel.js'
import {type BackendInfo, type BackendChoice, initBackend} from '../engine/backend.js'
import {type HostBatch, type MaskedExample, collate, disposeBatch, toTensors} from '../model/batch.js'
import {type BertConfig} from '../model/config.js'
import {loadCheckpoint} from '../model/checkpoint.js'
import type {ForwardContext} from '../model/layers.js'
import {SpanBertForPreTraining} from '../model/pretraining.js'
import {SpanError} from '../stream/errors.js'
import type {LineWriter} from '../stream/writer.js'
import {type FileHook, STATE_FORMAT, type TrainerState, checkTrainerState, saveTrainingCheckpoint} from './checkpointing.js'
import {type TrainConfig, resolveWarmup} from './config.js'
import {type EvalSetup, checkEvalFile, evaluate} from './eval.js'
import {ExampleMaker} from './examples.js'
import {checkFingerprint} from './index-file.js'
import {evalRecord, trainRecord} from './metrics.js'
import {Tally, addGrads, microStep, scaleGrads} from './objective.js'
import {ADAMW_DEFAULTS, AdamW, clipByGlobalNorm} from './optim.js'
import type {Progress} from './progress.js'
import {EpochSampler, STREAM, deriveRng} from './sampler.js'
import {LinearSchedule} from './schedule.js'
import {type TrainData, freshModelConfig, prepareData, resumedModelConfig, withDropout} from './setup.js'
import {loadTrainingState} from './state.js'

/** Where a run's output goes, and hooks for tests. */
export interface TrainIO {
  out: LineWriter // metrics NDJSON (stdout)
  log: (line: string) => void // stderr
  progress: Progress
  onStep?: (step: number) => void
  fileHook?: FileHook
}

/** A run: its resolved config, where to save, and where to resume from. */
export interface RunSpec {
  config: TrainConfig
  out: string
  resume: string | null
  stopAt: number | null // end this run at this step (the schedule still runs to max-steps)
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
  dp: DataParallel // issue 14: this rank's share, collectives, rank 0 writes
}

/**
 * `span pretrain`: sets up (fresh or resumed), trains to max-steps (or stop-at), saves.
 * Returns the signal that ended the run early (checkpointed), else null.
 */
export async function pretrain(spec: RunSpec, io: TrainIO): Promise<string | null> {
  const dp = DataParallel.open()
  let run: Run | null = null
  let failed: unknown
  try {
    run = await setUp(spec, dp)
    startRanks(run)
    if (!dp.writes) io = {...io, out: quietOut(), progress: quietProgress()}
    describe(run, io)
    return await trainLoop(run, io)
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

/** Every rank runs the same config on the same data, from rank 0's parameters (issue 14). */
function startRanks(run: Run): void {
  const {threads: _threads, ...same} = run.c
  run.dp.checkSame('resolved config or data', {config: same, data: run.data.index.fingerprint, model: run.model.config})
  run.dp.broadcast(run.model.params.entries())
}

/** Ranks other than 0 write no metrics and no progress. */
function quietOut(): LineWriter {
  return {record: async () => {}, flush: async () => {}} as unknown as LineWriter
}

function quietProgress(): Progress {
  return {start() {}, update() {}, stop() {}}
}

/** Data first (its errors come before a backend starts), then backend, model, optimiser, state. */
async function setUp(spec: RunSpec, dp: DataParallel): Promise<Run> {
  const c = spec.config
  c.warmup = resolveWarmup(c)
  const resumed = spec.resume ? await resumedModelConfig(c, spec.resume) : null
  const data = await prepareData(c, (vocab) => withDropout(resumed ?? freshModelConfig(c, vocab.tokens.length, vocab.special.pad), c.dropout), spec.resume)
  let backend: BackendInfo
  try {
    const ev = evalSetupOf(c, data, data.model)
    if (ev) await checkEvalFile(ev)
    backend = await initBackend(c.backend as BackendChoice, c.threads ?? undefined)
  } catch (err) {
    await data.index.close()
    throw err
  }
  const state = await startModel(spec, data, dp)
  const maker = new ExampleMaker(data.rules, data.maskerFor(data.rules.kind), c.seed, STREAM.mask, data.index.name)
  const sched = new LinearSchedule(c.lr, c.warmup, c['max-steps'])
  return {spec, c, data, ...state, maker, sched, evalSetup: evalSetupOf(c, data, state.model.config), backend, dp}
}

/** A fresh model and optimiser, or the checkpoint's with the trainer state it saved. */
async function startModel(spec: RunSpec, data: TrainData & {model: BertConfig}, dp: DataParallel): Promise<Pick<Run, 'model' | 'opt' | 'sampler' | 'dropout' | 'step'>> {
  const c = spec.config
  const opt = new AdamW({...ADAMW_DEFAULTS, weightDecay: c['weight-decay']})
  const sampler = new EpochSampler(data.index.size, c.seed)
  let model: SpanBertForPreTraining | null = null
  try {
    if (!spec.resume) return {model: SpanBertForPreTraining.init(data.model, c.seed), opt, sampler, dropout: deriveRng(c.seed, STREAM.dropout), step: 0}
    model = (await loadCheckpoint(spec.resume, {objectives: data.model.objectives})).model
    const state = checkTrainerState(await loadTrainingState(spec.resume, opt), spec.resume)
    checkMoments(opt, model, spec.resume)
    checkFingerprint(data.index.name, state.data, data.index.fingerprint)
    dp.checkResumeWorld(state.world, spec.resume)
    sampler.restore(state.sampler)
    return {model, opt, sampler, dropout: Rng.fromState(state.dropout_rng), step: state.step}
  } catch (err) {
    opt.dispose()
    model?.dispose()
    await data.index.close()
    throw err
  }
}

function evalSetupOf(c: TrainConfig, data: TrainData, model: BertConfig): EvalSetup | null {
  if (!c.eval) return null
  const {kind: _kind, ...rules} = data.rules
  return {path: c.eval, rules, masker: data.maskerFor, seed: c.seed, batchSize: c['batch-size'], maxTargets: model.sbo.max_targets}
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

/** The run's config on stderr (SPEC.md: logs on stderr, data on stdout). */
function describe(run: Run, io: TrainIO): void {
  const m = run.model.config
  io.log(`config: ${JSON.stringify(run.c)}`)
  io.log(`model: L${m.num_hidden_layers} H${m.hidden_size} A${m.num_attention_heads} I${m.intermediate_size}, ` +
    `${run.model.params.size()} parameters, objectives ${m.objectives.join(',')}; backend ${run.backend.name}; ` +
    `${run.data.index.size} ${run.data.rules.kind === 'blocks' ? 'blocks (masked dynamically, a fresh mask every epoch)' : 'masked examples'}` +
    (run.step > 0 ? `; resuming at step ${run.step}` : ''))
  const {size} = run.dp
  io.log(`effective batch ${size * run.c['batch-size'] * run.c.accumulate}: ${size} process${size === 1 ? '' : 'es'} × --batch-size ${run.c['batch-size']} × --accumulate ${run.c.accumulate}`)
}

/**
 * The steps, with logging, evaluation and checkpoints on their schedules. SIGINT or SIGTERM
 * ends the run after the current step, with a checkpoint (a second SIGINT kills at once).
 */
async function trainLoop(run: Run, io: TrainIO): Promise<string | null> {
  const c = run.c
  const last = Math.min(c['max-steps'], run.spec.stopAt ?? Infinity)
  let saved = run.spec.resume === run.spec.out ? run.step : -1
  let evaluated = -1
  let window = newWindow()
  const signal = watchSignals()
  let stop: string | null = null // a signal any rank caught, agreed after every step
  io.progress.start(c['max-steps'], run.step)
  try {
    while (run.step < last && !stop) {
      const t0 = performance.now()
      const lr = run.sched.at(run.step + 1)
      const r = oneStep(run, lr)
      run.step++
      window.seconds += (performance.now() - t0) / 1000
      mergeTally(window.tally, r.tally)
      io.progress.update(run.step, r.tally.batches ? r.tally.loss / r.tally.batches : null, window.tokensPerS())
      await new Promise((resolve) => setImmediate(resolve)) // lets a signal in
      stop = run.dp.agreeStop(signal.caught)
      if (run.step % c['log-every'] === 0 || run.step === last || stop) {
        await emit(io, trainRecord(run.step, run.sampler.state().epoch, window.tally, run.model.config.objectives, lr, r.gradNorm, window.seconds))
        window = newWindow()
      }
      if (run.evalSetup && run.step % c['eval-every'] === 0) evaluated = await runEval(run, io)
      if (run.step % c['save-every'] === 0) saved = await save(run, io)
      io.onStep?.(run.step)
    }
  } finally {
    signal.dispose()
    io.progress.stop()
  }
  if (stop) io.log(`${stop} at step ${run.step}: saving a checkpoint; continue with --resume ${run.spec.out}`)
  if (run.evalSetup && evaluated !== run.step && !stop) await runEval(run, io)
  if (saved !== run.step) await save(run, io)
  if (run.dp.size > 1) io.log(`all-reduce: ${(run.dp.allReduceSeconds * 1000 / Math.max(1, run.step)).toFixed(2)} ms per step (this run's steps)`)
  return stop
}

/** The metrics of the steps since the last record. */
function newWindow(): {tally: Tally; seconds: number; tokensPerS(): number | null} {
  return {tally: new Tally(), seconds: 0, tokensPerS() {
    return this.seconds > 0 ? this.tally.tokens / this.seconds : null
  }}
}

/** Notes SIGINT/SIGTERM instead of dying, once: a second SIGINT has the default effect. */
function watchSignals(): {caught: string | null; dispose(): void} {
  const w = {caught: null as string | null, dispose: () => {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }}
  function onSignal(name: string): void {
    w.caught = name
    w.dispose()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  return w
}

/** A metrics record, flushed at once: a reader (`| jq`, a plotting script) sees each as it comes. */
async function emit(io: TrainIO, rec: Record<string, unknown>): Promise<void> {
  await io.out.record(rec)
  await io.out.flush()
}

function mergeTally(into: Tally, t: Tally): void {
  for (const k of ['mlm', 'sbo', 'nsp'] as const) for (let j = 0; j < 3; j++) into.sums[k][j] += t.sums[k][j]
  into.loss += t.batches > 0 ? t.loss / t.batches : 0
  into.batches += t.batches > 0 ? 1 : 0
  into.tokens += t.tokens
}

/**
 * One optimisation step over `accumulate` micro-batches: their gradients summed and divided by
 * their number (the mean, as one batch of all their examples would weigh them), clipped to a
 * global norm of --clip (BERT, SpanBERT: 1.0), one AdamW update (SPEC.md "Model and optimisation").
 */
function oneStep(run: Run, lr: number): {tally: Tally; gradNorm: number} {
  const rng = run.dp.size > 1 ? deriveRng(run.c.seed, STREAM.dropout, run.step, run.dp.rank) : run.dropout // per rank and step: resumable without per-rank state
  const ctx: ForwardContext = {training: true, rng}
  const acc = new Map<string, tf.Tensor>()
  const tally = new Tally()
  try {
    for (let k = 0; k < run.c.accumulate; k++) {
      const host = nextBatch(run)
      const n = run.dp.counts({mlm: host.mlmPos.length, sbo: host.sboLabels.length, rows: host.B}) // the global batch's
      if (n.mlm === 0) continue // no targets: nothing to learn from (blocks of special tokens only)
      if (host.mlmPos.length === 0) {
        tally.add(new Float32Array(9), 0, realTokens(host)) // this rank's share has none; the others' count
        continue
      }
      const b = toTensors(host)
      try {
        const r = microStep(run.model, b, ctx, n)
        addGrads(acc, r.grads)
        tally.add(r.stats, r.total, realTokens(host))
      } finally {
        disposeBatch(b)
      }
    }
    if (tally.batches === 0) return {tally, gradNorm: 0}
    scaleGrads(acc, 1 / tally.batches)
    run.dp.reduceGrads(run.model.params.entries(), acc) // summed over ranks: the global batch's gradient
    run.dp.reduceTally(tally)
    const {norm: gradNorm, scale} = clipByGlobalNorm(acc, run.c.clip > 0 ? run.c.clip : Infinity)
    run.opt.apply(run.model.params.entries(), acc, lr, scale)
    return {tally, gradNorm}
  } finally {
    tf.dispose([...acc.values()])
  }
}

/** The next --batch-size examples of the epoch order, masked (blocks) and padded. */
function nextBatch(run: Run): HostBatch {
  const examples: MaskedExample[] = []
  const [lo, hi] = run.dp.share(run.c['batch-size']) // this rank's rows of the global micro-batch
  for (let j = 0; j < run.dp.size * run.c['batch-size']; j++) {
    const {index, epoch} = run.sampler.next()
    if (j >= lo && j < hi) examples.push(run.maker.make(run.data.index.read(index), index, epoch))
  }
  const m = run.model.config
  return collate(examples, {padId: run.data.vocab.special.pad, maxTargets: m.sbo.max_targets, maxPositions: m.max_position_embeddings})
}

function realTokens(h: HostBatch): number {
  let n = 0
  for (let i = 0; i < h.mask.length; i++) n += h.mask[i]
  return n
}

async function runEval(run: Run, io: TrainIO): Promise<number> {
  if (!run.dp.writes) return run.step
  const tally = await evaluate(run.model, run.evalSetup as EvalSetup)
  await emit(io, evalRecord(run.step, tally, run.model.config.objectives))
  return run.step
}

async function save(run: Run, io: TrainIO): Promise<number> {
  if (!run.dp.writes) return run.step // rank 0 alone writes
  const state: TrainerState = {
    format: STATE_FORMAT, step: run.step, sampler: run.sampler.state(), dropout_rng: run.dropout.state(),
    data: run.data.index.fingerprint, config: run.c, world: run.dp.size,
  }
  await saveTrainingCheckpoint(run.spec.out, run.model, run.opt, run.data.vocabPath, state, io.fileHook)
  await emit(io, {step: run.step, checkpoint: run.spec.out})
  return run.step
}
