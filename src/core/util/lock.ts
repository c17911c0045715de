import {lstatSync, readFileSync, realpathSync, rmdirSync, statSync, unlinkSync} from 'node:fs'
import {lstat, open, readFile, realpath, rename, stat, unlink, writeFile} from 'node:fs/promises'
import {join, resolve} from 'node:path'
import {SpanError} from './errors.js'
import {pidAlive} from './atomic.js'
import {makeDirs} from './dirs.js'
import {describeFsError, isErrno, type ErrnoError} from './fs-errors.js'

/** A held lock: release() removes the lock file (if it is still ours). */
export interface DirLock {
  path: string
  release(): void
}

/** The lock file inside a locked directory (a new run's directory may hold it and nothing else). */
export const LOCK_FILE = '.span.lock'

/** A directory's real path (symbolic links, `./`, `..`, trailing slashes resolved); an absent one as resolve() spells it. */
export function realDir(dir: string): string {
  try {
    return realpathSync(dir)
  } catch {
    return resolve(dir)
  }
}

/** The lock file of a directory, keyed on its real path: `same` and a symbolic link to it share one. */
export const lockPathOf = (dir: string): string => join(realDir(dir), LOCK_FILE)

/**
 * Takes the lock of an output directory (made if absent): a `.span.lock` file in it holding the
 * owner's pid, created exclusively, so that two runs never write into one directory, however
 * its path is spelt. Creating it is also the check that the directory is writable, before any
 * work. A lock whose process is alive refuses in one line; a stale one (its process died) is
 * taken over, with a notice through `log`. Released at release() and, failing that, at exit.
 */
export async function lockDir(dir: string, log: (line: string) => void, o: {removeIfEmpty?: boolean} = {}): Promise<DirLock> {
  if ((await stat(dir).catch(() => null))?.isDirectory() === false) throw new SpanError(`${dir}: a file is in the way (EEXIST); give a directory`)
  await makeDirs(dir).catch((err) => Promise.reject(lockFsError(err, dir)))
  const real = await realpath(dir)
  try {
    return await take(join(real, LOCK_FILE), dir, log, o.removeIfEmpty ? real : null)
  } catch (err) {
    if (o.removeIfEmpty) rmdirQuietly(real) // made for this run, which cannot start (a full disk): not left behind
    throw err
  }
}

async function take(path: string, dir: string, log: (line: string) => void, made: string | null): Promise<DirLock> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await create(path, dir)) return held(path, made)
    const owner = await ownerOf(path)
    if (owner !== null && pidAlive(owner)) {
      throw new SpanError(`${dir}: in use by another span run (pid ${owner}; lock ${path}); wait for it to end or choose another directory`)
    }
    if (await takeOver(path, dir)) {
      log(`took over the stale lock ${path} of pid ${owner ?? '?'} (no longer running)`)
      return held(path, made)
    }
  }
  throw new SpanError(`${dir}: could not take the lock ${path} (other runs keep taking it)`)
}

/** An errno error of the run directory as span's line: a directory span cannot write is said at once. */
export function lockFsError(err: unknown, dir: string, named = false): unknown {
  if (!isErrno(err)) return err
  const e = err as ErrnoError
  if (e.code === 'ENOTDIR' && !named) return new SpanError(describeFsError(e, fileOnPath(dir))) // the component that is a file
  const why = e.code === 'EACCES' || e.code === 'EPERM' || e.code === 'EROFS' ? ': span writes the run there (choose a directory you can write)' : ''
  return new SpanError(`${describeFsError(e, named || !e.path ? dir : undefined)}${why}`)
}

/** The first component of `dir` that exists and is not a directory (or `dir` itself). */
function fileOnPath(dir: string): string {
  const parts = dir.split('/')
  for (let i = 1; i <= parts.length; i++) {
    const p = parts.slice(0, i).join('/')
    if (p === '') continue
    try {
      if (!lstatSync(p).isDirectory() && !statSync(p).isDirectory()) return p
    } catch {
      return dir
    }
  }
  return dir
}

async function create(path: string, dir: string): Promise<boolean> {
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
    throw lockFsError(err, dir, true)
  }
}

/** A stale lock replaced by one naming us in one rename; then no other taker may have won. */
async function takeOver(path: string, dir: string): Promise<boolean> {
  const tmp = `${path}.tmp-${process.pid}`
  try {
    await writeFile(tmp, `${process.pid}\n`)
    await rename(tmp, path)
  } catch (err) {
    await unlink(tmp).catch(() => {})
    throw lockFsError(err, dir, true)
  }
  return (await ownerOf(path)) === process.pid
}

/** The pid a lock file names (null: none); something else in the lock's place is an error. */
async function ownerOf(path: string): Promise<number | null> {
  const st = await lstat(path).catch(() => null)
  if (st && !st.isFile()) throw new SpanError(`${path}: in the way of span's lock file (not a regular file); remove it`)
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

/** A lock held; `made`: a directory this run made, removed at release when nothing but the lock went into it. */
function held(path: string, made: string | null): DirLock {
  const release = () => {
    process.off('exit', release)
    heldLocks.delete(path)
    try {
      if (lstatSync(path).isFile() && Number(readFileSync(path, 'utf-8').trim()) === process.pid) unlinkSync(path)
    } catch {
      // already gone
    }
    if (made) rmdirQuietly(made)
  }
  process.on('exit', release)
  heldLocks.set(path, release)
  return {path, release}
}

/** rmdir, which removes only an empty directory (a run that failed before writing leaves no litter). */
function rmdirQuietly(dir: string): void {
  try {
    rmdirSync(dir)
  } catch {
    // not empty, or gone: kept as it is
  }
}
