import {existsSync, readdirSync} from 'node:fs'
import {readdir, rm} from 'node:fs/promises'
import {join} from 'node:path'

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

/** Removes all but the newest `keep` checkpoint-STEP/ directories. */
export async function rotateCheckpoints(out: string, keep: number): Promise<void> {
  const steps = await checkpointSteps(out)
  for (const s of steps.slice(0, Math.max(0, steps.length - keep))) await rm(checkpointDir(out, s), {recursive: true, force: true})
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
 * checkpoint-STEP/, which `note` is told.
 */
export function modelDir(dir: string, note?: (line: string) => void): string {
  if (existsSync(join(dir, 'config.json'))) return dir
  if (existsSync(join(dir, BEST_DIR, 'config.json'))) return join(dir, BEST_DIR)
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
