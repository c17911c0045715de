import {Flags} from '@oclif/core'
import {resolve} from 'node:path'
import {numberFlag, stdoutStream, unblockStdout} from './base.js'
import {backendFlags} from './backend-flags.js'
import {lossScaleFlags} from './loss-scale-flags.js'
import {LOSS_SCALE_DEFAULTS} from '../core/train/loss-scale.js'
import {MAX_BATCH} from './limits.js'
import {type BackendOptions, backendPrecision} from '../core/engine/backend.js'
import {checkpointVocab, isCheckpoint, recoverRun, verifyManifest} from '../core/model/checkpoint.js'
import {PRESETS} from '../core/model/config.js'
import {launchRank} from '../core/util/launch.js'
import {holdsLock, lockDir} from '../core/util/lock.js'
import {dataSha256} from '../core/util/data-hash.js'
import {setDropout} from '../core/train/setup.js'
import {SpanError, UsageError, errorIn} from '../core/util/errors.js'
import {LineWriter} from '../core/stream/writer.js'
import {DEFAULT_VOCAB, type Vocab, loadVocab} from '../core/text/vocab.js'
import type {TaskAdapter} from '../core/train/adapter.js'
import {type FinetuneSettings, checkResumeConfig, readFinetuneConfig} from '../core/train/finetune-config.js'
import {finetune} from '../core/train/finetune-loop.js'
import {openScalars} from '../core/train/metrics.js'
import {patientMetrics} from '../core/train/metrics-out.js'
import {signalExitCode} from '../core/train/signals.js'
import {makeProgress} from '../core/train/progress.js'
import {type PlannedRunDir, type RunDir, modelDir, planRunDir, realPathOf, resumeDir, runDirOf} from '../core/train/run-dir.js'
import {TRAINER_STATE_FILE} from '../core/train/state.js'
import {metricsLoss} from '../core/util/fs-errors.js'

/**
 * The flags every `finetune TASK` command shares, defined once: the model to start from, the
 * data, the loop's settings (train/finetune-loop.ts) and the run's control. `d` holds the task's
 * own defaults (BERT's run_classifier and run_squad differ in learning rate and length).
 */
export function finetuneFlags(d: {lr: number; maxLen: number; minLen: number; unit: string}) {
  return {
    init: Flags.string({
      description: 'checkpoint directory to start from (span or Hugging Face BERT; a run directory means its best/, else its newest checkpoint-STEP/)',
      exclusive: ['preset'],
    }),
    preset: Flags.string({description: 'start from a randomly initialised model of this size instead of --init', options: Object.keys(PRESETS)}),
    vocab: Flags.string({
      description: "vocabulary (default: the --init checkpoint's vocab.txt; for --preset the embedded one); needed for checkpoints without vocab.txt",
    }),
    out: Flags.string({
      description: "run directory: best/ and checkpoint-STEP/ go there (default: a new runs/finetune-TASK-YYYYmmdd-HHMMSS/; with --resume, the resumed run's)",
    }),
    cased: Flags.boolean({description: 'keep case and accents (overrides the checkpoint)', exclusive: ['uncased']}),
    uncased: Flags.boolean({description: 'lowercase and strip accents (overrides the checkpoint)', exclusive: ['cased']}),
    'max-len': Flags.integer({description: `max_seq_length: tokens per ${d.unit}`, default: d.maxLen, min: d.minLen}),
    lr: numberFlag('peak learning rate', {default: d.lr, min: 0}),
    'warmup-proportion': numberFlag('share of the steps spent warming up', {default: 0.1, min: 0, max: 1}),
    'weight-decay': numberFlag('AdamW decoupled weight decay', {default: 0.01, min: 0}),
    clip: numberFlag('gradient clipping: largest global L2 norm (0: off)', {default: 1.0, min: 0}),
    epochs: Flags.integer({description: 'passes over the training set', default: 3, min: 1}),
    'batch-size': Flags.integer({description: `${d.unit}s per micro-batch (and per inference batch)`, default: 32, min: 1, max: MAX_BATCH}),
    accumulate: Flags.integer({description: 'micro-batches whose gradients make one step', default: 1, min: 1, max: MAX_BATCH}),
    seed: Flags.integer({description: 'seed of the new layers, the order and dropout', default: 1, min: 0}),
    ...backendFlags(),
    ...lossScaleFlags(true),
    'log-every': Flags.integer({description: 'steps per metrics record', default: 10, min: 1}),
    'eval-every': Flags.integer({description: 'also evaluate and checkpoint every N steps (default: at epoch ends only)', min: 1}),
    keep: Flags.integer({description: 'checkpoint-STEP/ directories kept, the newest (best/ is kept besides)', default: 1, min: 1}),
    patience: Flags.integer({description: 'stop after N evaluations without a better dev score', min: 1}),
    'max-train-examples': Flags.integer({description: `train on the first N ${d.unit}s only`, min: 1}),
    'group-by-length': Flags.boolean({description: `batch ${d.unit}s of similar length together (seeded)`}),
    'stop-at': Flags.integer({description: 'end this invocation after this step with a checkpoint (--resume continues it)', min: 1}),
    resume: Flags.string({
      description: 'continue the run saved in this checkpoint-STEP/ (or run) directory, exactly: its saved settings supply every flag not given',
    }),
    tensorboard: Flags.string({description: 'write TensorBoard event files (losses, learning rate, gradient norm, dev metrics) here'}),
    dropout: numberFlag("hidden and attention dropout (default: the checkpoint's or preset's, 0.1)", {min: 0, max: 0.999}),
  }
}

type Given = Record<string, unknown>

const LOSS_SCALE_KEYS = Object.keys(LOSS_SCALE_DEFAULTS)

/** The loop's settings from the flags (the task adds its own keys). */
export function loopSettings(f: Given, task: string, cased: boolean): FinetuneSettings {
  const g = f as Record<string, never>
  return {
    task,
    init: f.init ? resolve(String(f.init)) : f.preset ? `preset:${String(f.preset)}` : `resume:${String(f.resume)}`,
    train: resolve(g.train), // absolute: --resume works from any directory
    dev: g.dev ? resolve(g.dev) : null,
    out: g.out,
    cased,
    'max-len': g['max-len'],
    lr: g.lr,
    'warmup-proportion': g['warmup-proportion'],
    'weight-decay': g['weight-decay'],
    clip: g.clip,
    epochs: g.epochs,
    'batch-size': g['batch-size'],
    accumulate: g.accumulate,
    seed: g.seed,
    backend: g.backend,
    threads: g.threads ?? null,
    'log-every': g['log-every'],
    'eval-every': g['eval-every'] ?? null,
    keep: g.keep,
    patience: g.patience ?? null,
    'max-train-examples': g['max-train-examples'] ?? null,
    'group-by-length': Boolean(f['group-by-length']),
    dropout: g.dropout ?? null,
    ...Object.fromEntries(LOSS_SCALE_KEYS.map((k) => [k, g[k] ?? null])),
  }
}

/** Where the model comes from: the resumed checkpoint, else --init (a run directory: its best/, else its newest checkpoint-STEP/, told to `log`), else null (--preset). */
export async function modelSource(f: Given, log?: (l: string) => void): Promise<{dir: string | null; resume: string | null}> {
  if (f.resume) {
    const dir = await resumeDir(String(f.resume), TRAINER_STATE_FILE)
    if (!(await isCheckpoint(dir))) throw new SpanError(`${String(f.resume)}: no checkpoint to resume from`)
    return {dir, resume: dir}
  }
  if (!f.init && !f.preset) throw new UsageError('give --init CHECKPOINT (or --preset NAME for a randomly initialised model)')
  if (!f.init) return {dir: null, resume: null}
  const dir = modelDir(String(f.init), log)
  if (!(await isCheckpoint(dir))) throw new SpanError(`${String(f.init)}: not a checkpoint directory (no config.json)`)
  return {dir, resume: null}
}

/** The vocabulary (the model's, else --vocab or the embedded one) and the casing the run uses. */
export async function runVocab(f: Given, dir: string | null): Promise<{vocab: Vocab; cased: boolean}> {
  const given = f.vocab as string | undefined
  const vocab = loadVocab(dir ? await checkpointVocab(dir, given) : (given ?? DEFAULT_VOCAB))
  return {vocab, cased: f.cased ? true : f.uncased ? false : vocab.cased}
}

/** Runs the loop with metrics on stdout and progress on stderr; a resumed run must keep its settings. */
export async function runLoop<U, B>(
  a: TaskAdapter<U, B>,
  c: FinetuneSettings,
  src: {resume: string | null},
  f: Given,
  log: (l: string) => void,
  fixed: readonly string[] = [],
): Promise<void> {
  // An empty training set (a TACRED "[]", a SWAG header without rows) is the file's error, for every task, before --out is touched
  if (a.units.length === 0) throw errorIn(c.train, 'no training examples (an empty list, or a header without rows): nothing to fine-tune on')
  setDropout(a.config, c.dropout) // --dropout: the model's layers read it at every forward
  c.precision = backendPrecision() // saved resolved (cuda's default depends on the GPU); a resumed run keeps it unless --precision is given
  c.data_sha256 = {train: await dataSha256(c.train), dev: c.dev ? await dataSha256(c.dev) : null} // saved: a resumed run must read the same data
  if (src.resume) {
    const saved = await readFinetuneConfig(src.resume)
    checkResumeConfig(saved, c as unknown as Given, src.resume, fixed)
    checkResumeData(saved, c, src.resume)
  }
  const planned = PLANNED.get(f)
  if (planned) f.out = c.out = (await planned.open()).out // every input read and checked: now the run directory is made, locked and named
  const lock = holdsLock(String(f.out)) ? null : await lockRun(String(f.out), log) // every task's --out is locked
  const metrics = metricsLoss(log, String(f.out)) // a full stdout: training goes on to its checkpoint, then exit 1 (as pretrain)
  unblockStdout() // the metrics never hold the loop (a stop signal is seen at its step)
  const out = patientMetrics(new LineWriter(stdoutStream(), (err) => metrics.onFail(err)), log)
  const scalars = await openScalars(launchRank() === 0 ? (f.tensorboard as string | undefined) : undefined) // data-parallel: rank 0 writes
  try {
    const outcome = await finetune(
      a,
      c,
      {resume: src.resume, stopAt: (f['stop-at'] as number | undefined) ?? null},
      {out, log, progress: makeProgress(`finetune ${a.task}`), scalars},
    )
    if (outcome.signal) process.exitCode = signalExitCode(outcome.signal, launchRank()) // checkpointed, but not finished
  } finally {
    await scalars.close()
    lock?.release()
  }
  await out.end()
  metrics.check()
}

/** The flags of the command as oclif parsed them, with what the user typed (`raw`). */
interface Parsed<F> {
  flags: F
  raw: {type: string; flag?: string}[]
}

/** Flags a resumed run may change (how it runs, not what it computes); every other saved one is fixed. */
const RUN_CONTROL = new Set(['backend', 'threads', 'precision', 'log-every', 'eval-every', 'keep', 'patience'])
/** Flags that are not settings of the run (never saved, never filled). */
const NOT_SAVED = new Set(['resume', 'stop-at', 'out', 'tensorboard', 'init', 'preset', 'cased', 'uncased'])

/**
 * What every `finetune TASK` does first: a new run needs `required` and a model (--init or
 * --preset); the run directory (--out, the resumed run's, or a fresh default one) is checked, and
 * made, locked and named by runLoop once every input is read (planRunDir; a resumed run's is
 * locked and repaired now, before --resume picks its checkpoint); then a resumed run's saved finetune_config.json supplies every
 * flag the user did not type (a typed one must agree, or is refused in one line: settleResumed).
 */
export async function openRun<F extends Record<string, unknown>, R extends keyof F & string>(
  parsed: Parsed<F>,
  defs: Record<string, unknown>,
  task: string,
  log: (l: string) => void,
  required: R[],
): Promise<{flags: F & {[K in R]-?: NonNullable<F[K]>} & {out: string}; lock: {release(): void}}> {
  const f = parsed.flags as Record<string, unknown>
  const resume = f.resume === undefined ? null : String(f.resume)
  if (!resume) checkNewRun(f, required)
  const planned = await planRunDir({
    out: f.out === undefined ? (resume ? runDirOf(resume) : undefined) : String(f.out),
    kind: `finetune-${task}`,
    resume,
    init: resume || f.init === undefined ? null : String(f.init),
    log,
  })
  f.out = planned.out
  const run = takenOnce(planned)
  PLANNED.set(f, run)
  try {
    if (resume) await settleResume(parsed, defs, resume, task, required)
  } catch (err) {
    run.release()
    throw err
  }
  return {flags: parsed.flags as F & {[K in R]-?: NonNullable<F[K]>} & {out: string}, lock: run}
}

/** A resumed run's flags: its checkpoint checked (manifest), its saved finetune_config.json filling every flag not typed (settleResumed). */
async function settleResume(
  parsed: Parsed<Record<string, unknown>>,
  defs: Record<string, unknown>,
  resume: string,
  task: string,
  required: string[],
): Promise<void> {
  const f = parsed.flags
  const dir = await resumeDir(resume, TRAINER_STATE_FILE)
  if (!(await isCheckpoint(dir))) throw new SpanError(`${resume}: no checkpoint to resume from`)
  await verifyManifest(dir) // refuses a checkpoint that no single save wrote (a truncated trainer_state.json), before anything else is read
  const typed = new Set(parsed.raw.filter((t) => t.type === 'flag').map((t) => String(t.flag)))
  const saved = await readFinetuneConfig(dir)
  settleResumed(f, typed, saved, dir, Object.keys(defs))
  INHERITED.set(
    f,
    ['device', 'precision'].filter((k) => !typed.has(k) && saved[k] != null),
  )
  const missing = required.find((k) => f[k] === undefined)
  if (missing) throw new SpanError(`${dir}: no --${missing} saved (not a span finetune ${task} checkpoint?); give --${missing}`)
}

/** A new run names its data and its model (--init or --preset): usage errors, before anything is read. */
function checkNewRun(f: Given, required: string[]): void {
  for (const k of required)
    if (f[k] === undefined) throw new SpanError(`missing --${k}: ${REQUIRED_WHY[k] ?? 'needed by a new run'} (or --resume DIR to continue a run)`, 2)
  if (f.init === undefined && f.preset === undefined) throw new UsageError('give --init CHECKPOINT (or --preset NAME for a randomly initialised model)')
}

/** A planned run directory taken at the first open() (later ones return it); release() frees it if taken. */
function takenOnce(planned: PlannedRunDir): {open(): Promise<RunDir>; release(): void} {
  let taken: RunDir | null = null
  return {release: () => taken?.release(), open: async () => (taken ??= await planned.open())}
}

/** Per parsed flags: the run directory openRun checked, taken by runLoop once the run's inputs are read (planRunDir). */
const PLANNED = new WeakMap<object, {open(): Promise<RunDir>; release(): void}>()

/** Per parsed flags of a resumed run: the backend settings its saved config gave, not typed (backend.ts BackendOptions.inherited). */
const INHERITED = new WeakMap<object, string[]>()

/** The backend options of a finetune command: --threads as resolved, --device and --precision with what a resume inherited. */
export function backendOptions(f: Given, c: FinetuneSettings): BackendOptions {
  const [device, precision] = [f.device, f.precision] as [number | undefined, string | undefined]
  return {threads: c.threads ?? undefined, device, precision, inherited: INHERITED.get(f) ?? []}
}

const REQUIRED_WHY: Record<string, string> = {train: 'the training data', task: 'which task the data is'}

/** The flags of a resumed run: the saved value of every flag not typed; a typed one must agree (run control excepted). */
export function settleResumed(f: Record<string, unknown>, typed: Set<string>, saved: Record<string, unknown>, dir: string, names: string[]): void {
  const differs = (name: string, given: unknown, was: unknown) =>
    new SpanError(`--${name} ${JSON.stringify(given)} differs from the run in ${dir} (${JSON.stringify(was)}); leave it out to continue the run as it was`, 2)
  for (const name of names) {
    if (NOT_SAVED.has(name) || !(name in saved)) continue
    const was = saved[name]
    if (!typed.has(name)) f[name] = was === null ? undefined : was
    else if (name === 'train' || name === 'dev')
      continue // the same data under any name: checked by its SHA-256 (checkResumeData)
    else if (!RUN_CONTROL.has(name) && !sameValue(name, f[name], was)) throw differs(name, f[name], was)
  }
  if (typeof saved.cased === 'boolean') {
    if ((typed.has('cased') || typed.has('uncased')) && Boolean(f.cased) !== saved.cased)
      throw differs(f.cased ? 'cased' : 'uncased', true, saved.cased ? 'cased' : 'uncased')
    ;[f.cased, f.uncased] = [saved.cased, !saved.cased]
  }
  const init = typeof saved.init === 'string' ? saved.init : null
  if (init?.startsWith('preset:')) {
    if (typed.has('preset') && f.preset !== init.slice(7)) throw differs('preset', f.preset, init.slice(7))
    if (typed.has('init')) throw differs('init', f.init, init)
    f.preset = init.slice(7)
  } else if (init && !init.startsWith('resume:')) {
    if (typed.has('init') && realPathOf(String(f.init)) !== realPathOf(init)) throw differs('init', f.init, init)
    if (typed.has('preset')) throw differs('preset', f.preset, init)
    f.init = init
  }
}

/** A typed value against a saved one: equal as JSON, as text ('0' and 0), or as a task name (case and hyphens ignored); paths by their real path. */
function sameValue(name: string, a: unknown, b: unknown): boolean {
  if (JSON.stringify(a) === JSON.stringify(b) || (a !== null && b !== null && String(a) === String(b))) return true
  if (name === 'task') return String(a).toLowerCase().replaceAll(/[-_]/g, '') === String(b).toLowerCase().replaceAll(/[-_]/g, '')
  if ((name === 'vocab' || name === 'dict') && typeof a === 'string' && typeof b === 'string') return realPathOf(a) === realPathOf(b)
  return false
}

/** A resumed run reads the data its run trained on: the SHA-256 of --train (and --dev) against the saved one. */
function checkResumeData(saved: Record<string, unknown>, c: FinetuneSettings, dir: string): void {
  const was = saved.data_sha256 as {train?: string; dev?: string | null} | undefined
  if (!was || typeof was !== 'object' || !c.data_sha256) return // a run saved before span kept it
  for (const k of ['train', 'dev'] as const) {
    const want = was[k]
    const now = c.data_sha256[k]
    if (typeof want === 'string' && now !== want) {
      throw new SpanError(
        `--${k} ${c[k] ?? '(none)'}: not the data the run in ${dir} ${k === 'train' ? 'trained on' : 'scored on'} (sha256 ${now?.slice(0, 12) ?? 'none'}…, the run's ${want.slice(0, 12)}…)`,
      )
    }
  }
}

/**
 * --out locked against a second writer, and what a run killed mid-save left in it repaired;
 * under a data-parallel launcher rank 0 alone locks (and writes).
 */
export async function lockRun(out: string, log: (l: string) => void): Promise<{release(): void}> {
  if (launchRank() !== 0) return {release() {}}
  const lock = await lockDir(out, log)
  for (const note of await recoverRun(out)) log(note)
  return lock
}

/** The flags every `predict TASK` command shares. */
export function predictFlags(task: string, unit: string) {
  return {
    model: Flags.string({
      description: `fine-tuned checkpoint directory (span finetune ${task}; a run directory means its best/, else its newest checkpoint-STEP/)`,
      required: true,
    }),
    vocab: Flags.string({description: 'vocabulary file, for a checkpoint without vocab.txt'}),
    data: Flags.string({description: 'the data to predict', required: true}),
    'max-len': Flags.integer({description: `tokens per ${unit} (default: the model's fine-tuning setting)`, min: 4}),
    'batch-size': Flags.integer({description: `${unit}s per forward pass`, default: 32, min: 1, max: MAX_BATCH}),
    ...backendFlags(),
  }
}

/** --model as a checkpoint directory (a run directory: its best/, else its newest checkpoint-STEP/, said on stderr) and its finetune_config.json. */
export async function predictModel(model: string, task: string): Promise<{dir: string; saved: Record<string, unknown>}> {
  const dir = modelDir(model, (l) => process.stderr.write(`span predict ${task}: ${l}\n`))
  if (!(await isCheckpoint(dir))) throw new SpanError(`${model}: not a checkpoint directory (no config.json)`)
  const saved = await readFinetuneConfig(dir)
  checkSavedTask(model, saved.task, task)
  return {dir, saved}
}

/** The predict commands other than glue's, whose fine-tuning saves the GLUE task's own name (mrpc, sst-2, …). */
const NOT_GLUE = ['squad', 'mrqa', 'ner', 'nli', 'tacred', 'swag', 'coref']

/**
 * A model fine-tuned here for another task is the wrong input, a data error (exit 1) for every
 * predict command, said before anything else of it is read (issue 36). A model without
 * finetune_config.json (a Hugging Face one) is left to each command.
 */
function checkSavedTask(model: string, savedTask: unknown, task: string): void {
  if (typeof savedTask !== 'string') return
  const other = task === 'glue' ? NOT_GLUE.includes(savedTask) : savedTask !== task
  if (!other) return
  const command = NOT_GLUE.includes(savedTask) ? savedTask : 'glue'
  throw new SpanError(`${model}: a span finetune ${savedTask} model, not ${task === 'glue' ? 'a GLUE' : `a ${task}`} one (span predict ${command} reads it)`)
}
