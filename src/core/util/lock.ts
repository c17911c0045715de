import {readFileSync, unlinkSync} from 'node:fs'
import {open, readFile, rename, stat, unlink, writeFile} from 'node:fs/promises'
import {basename, dirname, join, resolve} from 'node:path'
import {SpanError} from '../stream/errors.js'
import {pidAlive} from './atomic.js'
import {makeDirs} from './dirs.js'

/** A held lock: release() removes the lock file (if it is still ours). */
export interface DirLock {
  path: string
  release(): void
}

/** The lock file of an output directory: a sibling, so that swapping the directory keeps it. */
export const lockPathOf = (dir: string): string => join(dirname(resolve(dir)), `.${basename(resolve(dir))}.lock`)

/**
 * Takes the lock of an output directory (a `.DIR.lock` file beside it holding the owner's pid),
 * so that two runs never write into one directory. A lock whose process is alive refuses in one
 * line; a stale one (its process died) is taken over, with a notice through `log`. The lock is
 * released at release() and, failing that, when the process exits.
 */
export async function lockDir(dir: string, log: (line: string) => void): Promise<DirLock> {
  const path = lockPathOf(dir)
  if ((await stat(dir).catch(() => null))?.isDirectory() === false) throw new SpanError(`${dir}: a file is in the way (EEXIST); give a directory`)
  await makeDirs(dirname(path))
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await create(path)) return held(path)
    const owner = await ownerOf(path)
    if (owner !== null && pidAlive(owner)) {
      throw new SpanError(`${dir}: in use by another span run (pid ${owner}; lock ${path}); wait for it to end or choose another directory`)
    }
    // stale: replace it by one naming us in one rename, then check that no other taker won
    const tmp = `${path}.tmp-${process.pid}`
    await writeFile(tmp, `${process.pid}\n`)
    await rename(tmp, path)
    if ((await ownerOf(path)) === process.pid) {
      log(`took over the stale lock ${path} of pid ${owner ?? '?'} (no longer running)`)
      return held(path)
    }
  }
  throw new SpanError(`${dir}: could not take the lock ${path} (other runs keep taking it)`)
}

async function create(path: string): Promise<boolean> {
  try {
    const fh = await open(path, 'wx')
    try {
      await fh.writeFile(`${process.pid}\n`)
    } catch (err) {
      await fh.close().catch(() => {})
      await unlink(path).catch(() => {}) // a full disk: no empty lock file left behind
      throw err
    }
    await fh.close()
    return true
  } catch (err) {
    if ((err as {code?: string}).code === 'EEXIST') return false
    throw err
  }
}

async function ownerOf(path: string): Promise<number | null> {
  const text = await readFile(path, 'utf-8').catch(() => '')
  const pid = Number(text.trim())
  return Number.isInteger(pid) && pid > 0 ? pid : null
}

/** The locks this process holds, by lock path (a command may lock early, before its data is read). */
const heldLocks = new Map<string, () => void>()

/** True when this process holds the lock of `dir`. */
export const holdsLock = (dir: string): boolean => heldLocks.has(lockPathOf(dir))

/** Releases every lock this process holds: a command that failed after locking its --out leaves none behind. */
export function releaseAllLocks(): void {
  for (const release of [...heldLocks.values()]) release()
}

function held(path: string): DirLock {
  const release = () => {
    process.off('exit', release)
    heldLocks.delete(path)
    try {
      if (Number(readFileSync(path, 'utf-8').trim()) === process.pid) unlinkSync(path)
    } catch {
      // already gone
    }
  }
  process.on('exit', release)
  heldLocks.set(path, release)
  return {path, release}
}
