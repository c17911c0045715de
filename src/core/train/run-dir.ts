import {existsSync, readdirSync} from 'node:fs'
import {mkdir, readFile, readdir, rename, rm, stat, writeFile} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join, relative} from 'node:path'
import {launchEnv, launchRank} from '../util/launch.js'
import {SpanError} from '../stream/errors.js'
import {fsyncPath, recoverSaves} from '../util/atomic.js'
import {checkMakeable, makeDirs} from '../util/dirs.js'
import {fsError} from '../util/fs-errors.js'
import {LOCK_FILE, lockDir, lockFsError, realDir} from '../util/lock.js'

/**
 * A training run's output directory (pretrain and finetune alike, after Hugging Face Trainer's
 * output_dir): `checkpoint-STEP/` directories, each whole and resumable, of which the newest
 * --keep are kept, and `best/`, the best model so far by the dev metric (the latest without
 * one), which downstream commands (--init, --model) take when given the run directory.
 */
export const BEST_DIR = 'best'

export function checkpointDir(out: string, step: number): string {
  return join(out, `checkpoint-${step}`)
}

/** The steps of the checkpoint-STEP/ directories in out, ascending. */
export async function checkpointSteps(out: string): Promise<number[]> {
  let names: string[]
  try {
    names = await readdir(out)
  } catch {
    return []
  }
  return names
    .map((n) => /^checkpoint-(\d+)$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b)
}

/**
 * The run's own checkpoints: span-run.json in the run directory lists the steps of the
 * checkpoint-STEP/ directories this run wrote (kept across --resume), and --keep rotation
 * deletes only those, never a checkpoint-N/ it did not write (docs/formats.md#run-directories).
 */
export const RUN_MANIFEST = 'span-run.json'
const RUN_MANIFEST_FORMAT = 'span-run/1'

/** The steps span-run.json lists (none without one); an unreadable one is an error naming it. */
export async function ownCheckpoints(out: string): Promise<number[]> {
  const path = join(out, RUN_MANIFEST)
  let text: string
  try {
    text = await readFile(path, 'utf-8')
  } catch (err) {
    if ((err as {code?: string}).code === 'ENOENT') return []
    throw fsError(err, path)
  }
  let m: {format?: unknown; checkpoints?: unknown}
  try {
    m = JSON.parse(text) as typeof m
  } catch {
    m = {}
  }
  const steps = m?.format === RUN_MANIFEST_FORMAT && Array.isArray(m.checkpoints) ? m.checkpoints : null
  if (!steps || !steps.every((s) => Number.isInteger(s) && s >= 0))
    throw new SpanError(`${path}: not a span run manifest (${RUN_MANIFEST_FORMAT}); move it away or restore it`)
  return steps as number[]
}

async function writeOwnCheckpoints(out: string, steps: number[]): Promise<void> {
  const path = join(out, RUN_MANIFEST)
  const tmp = join(out, `.${RUN_MANIFEST}.tmp-${process.pid}`)
  await writeFile(tmp, JSON.stringify({format: RUN_MANIFEST_FORMAT, checkpoints: steps}) + '\n')
  await fsyncPath(tmp)
  await rename(tmp, path)
}

/**
 * Records checkpoint-`step`/ as the run's own, then removes all but the newest `keep` of the
 * run's own checkpoints. The manifest is written before anything is deleted and after: a kill
 * between leaves a listed checkpoint that is gone (harmless), never an own one unlisted.
 */
export async function rotateCheckpoints(out: string, keep: number, step: number): Promise<void> {
  const own = [...new Set([...(await ownCheckpoints(out)), step])].sort((a, b) => a - b)
  await writeOwnCheckpoints(out, own)
  const drop = own.slice(0, Math.max(0, own.length - keep))
  if (drop.length === 0) return
  for (const s of drop) await rm(checkpointDir(out, s), {recursive: true, force: true})
  await writeOwnCheckpoints(out, own.slice(drop.length))
}

/**
 * Where to resume from: dir itself when it holds a trainer state, else the newest
 * checkpoint-STEP/ inside it (a run directory).
 */
export async function resumeDir(dir: string, stateFile: string): Promise<string> {
  if (existsSync(join(dir, stateFile))) return dir
  const steps = await checkpointSteps(dir)
  if (steps.length === 0) return dir // the caller's own "nothing to resume from" message
  return checkpointDir(dir, steps[steps.length - 1])
}

/**
 * A model directory given as a run directory means its best/ (a directory with config.json is
 * itself); a run without best/ (pretrain without --eval writes none) means its newest
 * checkpoint-STEP/, which `note` is told. Every command that reads a model goes through it.
 */
export function modelDir(dir: string, note?: (line: string) => void): string {
  if (existsSync(join(dir, 'config.json'))) return dir
  if (existsSync(join(dir, BEST_DIR, 'config.json'))) return join(dir, BEST_DIR) // the run's model, as everywhere
  const newest = newestCheckpoint(dir)
  if (newest === null) return dir // not a checkpoint: the caller says so
  note?.(`${dir} has no ${BEST_DIR}/ (a run without dev scoring); using its newest checkpoint, ${newest}`)
  return newest
}

/** The newest checkpoint-STEP/ of a run directory that holds a config.json, or null. */
function newestCheckpoint(dir: string): string | null {
  let names: string[]
  try {
    names = readdirSync(dir)
  } catch {
    return null
  }
  const steps = names
    .map((n) => /^checkpoint-(\d+)$/.exec(n))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]))
  const found = steps.sort((a, b) => b - a).find((s) => existsSync(join(checkpointDir(dir, s), 'config.json')))
  return found === undefined ? null : checkpointDir(dir, found)
}

/** The run directory of a --resume: the parent of a checkpoint-STEP/, else the directory itself. */
export function runDirOf(dir: string): string {
  return /^checkpoint-\d+$/.test(basename(dir.replace(/\/+$/, ''))) ? dirname(dir.replace(/\/+$/, '')) : dir
}

/** Where a run's default directory goes, relative to the working directory. */
export const RUNS_DIR = 'runs'

/** `YYYYmmdd-HHMMSS` in local time (TensorBoard's and Lightning's habit for run names). */
export function runStamp(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}${p(d.getMonth() + 1)}${p(d.getDate())}-${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`
}

/**
 * A fresh run directory `runs/KIND-YYYYmmdd-HHMMSS/`, made now (an exclusive mkdir: never an
 * existing one); a second run in the same second gets `-2`, `-3`, ….
 */
export async function freshRunDir(kind: string, base = RUNS_DIR, now = new Date()): Promise<string> {
  await makeDirs(base).catch((err) => Promise.reject(fsError(err)))
  const stem = join(base, `${kind}-${runStamp(now)}`)
  for (let i = 1; ; i++) {
    const dir = i === 1 ? stem : `${stem}-${i}`
    try {
      await mkdir(dir)
      return dir
    } catch (err) {
      if ((err as {code?: string}).code !== 'EEXIST') throw fsError(err)
    }
  }
}

/** A path's real form, where only part of it exists yet: the real path of its deepest existing ancestor, then the rest. */
export function realPathOf(p: string): string {
  const real = realDir(p)
  if (existsSync(real) || dirname(p) === p) return real
  return join(realPathOf(dirname(p)), basename(p))
}

const inside = (a: string, b: string) => {
  const r = relative(b, a)
  return r === '' || (!r.startsWith('..') && !isAbsolute(r))
}

/** --out on its own and against --init: never the root, never where the model it starts from lives (usage errors). */
export function checkOutDir(out: string, init: string | null): void {
  const real = realPathOf(out)
  if (dirname(real) === real) throw new SpanError(`--out ${out}: the root directory cannot hold a run; give a directory of its own, such as runs/NAME`, 2)
  if (init === null) return
  const ri = realPathOf(init)
  if (inside(real, ri) || inside(ri, real)) {
    throw new SpanError(
      `--out ${out} and --init ${init} are the same place (${inside(real, ri) ? real : ri}): the run would write over the model it starts from; give another --out`,
      2,
    )
  }
}

function launchSize(): number {
  try {
    return launchEnv().size
  } catch {
    return 1 // malformed launcher variables: opening the collective reports them
  }
}

/** A run directory taken for writing: its path (the default one when none was given) and the release of its lock. */
export interface RunDir {
  out: string
  release(): void
}

/**
 * What every training run does first with its output: --out, or a fresh runs/KIND-…/ named on
 * stderr; checked (checkOutDir); locked (keyed on its real path; the lock's creation checks
 * that it is writable); repaired of what a save killed midway left there (and in a --resume
 * directory outside it), before --resume picks its checkpoint; and, for a new run (no
 * --resume), empty but for its lock, so that a run never trains into another's checkpoints.
 * Under a data-parallel launcher rank 0 alone locks and repairs.
 */
export async function openRunDir(o: RunDirOptions, now = new Date()): Promise<RunDir> {
  let out = o.out
  if (out === undefined) {
    if (launchSize() > 1) throw new SpanError('give --out DIR: under a data-parallel launcher every rank must name the same run directory', 2)
    out = await freshRunDir(o.kind, RUNS_DIR, now)
    o.log(`no --out given: this run goes to ${out}/`)
  } else checkOutDir(out, o.init)
  if (launchRank() !== 0) return {out, release() {}}
  const lock = await lockDir(out, o.log, {removeIfEmpty: o.out === undefined || !existsSync(out)})
  try {
    for (const note of await recoverSaves(out, o.resume)) o.log(note)
    if (o.resume)
      await ownCheckpoints(out) // span-run.json read now: a broken one is refused before any step, not at the first save
    else await checkEmpty(out)
  } catch (err) {
    lock.release()
    throw err
  }
  return {out, release: lock.release}
}

export interface RunDirOptions {
  out?: string
  kind: string
  resume: string | null
  init: string | null
  log: (l: string) => void
}

/** A run directory checked, not yet made, locked or announced: `out` is where it will be; open() takes it. */
export interface PlannedRunDir {
  out: string
  open(): Promise<RunDir>
}

/**
 * The first half of openRunDir, for a run that checks everything before doing anything: --out is
 * checked now and taken by open(), once every flag, input and saved state has been read and the
 * memory planned, so a refused run leaves no directory, lock or announcement behind. A default
 * directory's name is fixed now (a second run in the same second makes open() add `-2`); a
 * resumed run's directory is locked and repaired at once, as --resume picks its checkpoint there.
 */
export async function planRunDir(o: RunDirOptions): Promise<PlannedRunDir> {
  if (o.resume) {
    const run = await openRunDir(o)
    return {out: run.out, open: async () => run}
  }
  const now = new Date()
  if (o.out === undefined) {
    if (launchSize() > 1) throw new SpanError('give --out DIR: under a data-parallel launcher every rank must name the same run directory', 2)
    const out = join(RUNS_DIR, `${o.kind}-${runStamp(now)}`)
    await checkMakeable(out).catch((err) => Promise.reject(lockFsError(err, out)))
    return {out, open: () => openRunDir(o, now)}
  }
  checkOutDir(o.out, o.init)
  await checkMakeable(o.out).catch((err) => Promise.reject(lockFsError(err, o.out as string))) // a file in the way, no permission, a full disk: said before any input is read
  if ((await stat(o.out).catch(() => null))?.isDirectory()) await checkEmpty(o.out, (n) => n === LOCK_FILE || /\.tmp-\d+$/.test(n)) // what a killed save left is repaired by open()
  return {out: o.out, open: () => openRunDir(o, now)}
}

/** A new run's directory holds nothing but its lock. */
async function checkEmpty(out: string, ignored: (n: string) => boolean = (n) => n === LOCK_FILE): Promise<void> {
  const other = (await readdir(out).catch((err) => Promise.reject(fsError(err, out)))).filter((n) => !ignored(n))
  if (other.length === 0) return
  const shown = other.slice(0, 3).join(', ') + (other.length > 3 ? `, … (${other.length} entries)` : '')
  throw new SpanError(
    `${out}: not empty (${shown}); a new run needs a new or empty directory: give another --out (or none, for a fresh one under ${RUNS_DIR}/), or continue the run there with --resume ${out}`,
  )
}
