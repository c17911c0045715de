import {createHash} from 'node:crypto'
import {createReadStream, readFileSync} from 'node:fs'
import {mkdir, open, readFile, readdir, rename, rm, stat, writeFile} from 'node:fs/promises'
import {basename, dirname, isAbsolute, join, relative, resolve} from 'node:path'
import {SpanError} from './errors.js'
import {makeDirs} from './dirs.js'
import {fsError} from './fs-errors.js'

/** A file of a checkpoint, written by `write` to the temporary path it is given. */
export interface CheckpointFile {
  name: string
  write(tmpPath: string): Promise<void>
}

/** Sizes and SHA-256 of a checkpoint's files, written last into it and checked on --resume. */
export const MANIFEST_FILE = 'span-manifest.json'
const MANIFEST_FORMAT = 'span-manifest/1'

/**
 * True while a process with this pid runs (EPERM: it exists, owned by someone else). A zombie is
 * not running: a rank that mpirun killed and left unreaped stays one for good where PID 1 reaps
 * no orphans (many containers), and its lock or temporaries must still count as stale.
 */
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (err) {
    if ((err as {code?: string}).code !== 'EPERM') return false
  }
  return !isZombie(pid)
}

/** Linux: the state field of /proc/PID/stat (after the parenthesised name) is Z or X once it exited. */
function isZombie(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'latin1')
  } catch {
    return false // no /proc (macOS): kill(pid, 0) alone decides
  }
  const state = stat[stat.lastIndexOf(')') + 2]
  return state === 'Z' || state === 'X'
}

/** fsync of a file or a directory (a directory's fsync makes the renames in it durable). */
export async function fsyncPath(path: string, flags = 'r'): Promise<void> {
  const fh = await open(path, flags)
  try {
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/** A file's SHA-256, read as a stream. */
export async function sha256Of(path: string): Promise<string> {
  const h = createHash('sha256')
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer)
  return h.digest('hex')
}

/** span-manifest.json's text for files of these sizes and SHA-256 sums. */
export const manifestText = (files: Record<string, {size: number; sha256: string}>): string => JSON.stringify({format: MANIFEST_FORMAT, files}, null, 2) + '\n'

const exists = (p: string) =>
  stat(p).then(
    () => true,
    () => false,
  )
const tempOf = (dir: string, kind: 'tmp' | 'old', pid = process.pid) => join(dirname(dir), `.${basename(dir)}.${kind}-${pid}`)

/**
 * Writes a checkpoint directory as one unit: every file goes into a temporary sibling
 * directory, is fsynced and listed with its size and SHA-256 in span-manifest.json; then the
 * old directory is renamed aside, the new one renamed into place, anything else the old one
 * held (subdirectories, files of other tools) moved over, and the old one removed. At every
 * instant `dir` is the old checkpoint, the new one, or absent with the old one aside (put back
 * by recoverDir, which every save and every --resume runs first): never a mix of two saves.
 */
export async function writeFilesAtomically(dir: string, files: CheckpointFile[]): Promise<void> {
  dir = resolve(dir)
  await makeDirs(dirname(dir))
  await recoverDir(dir)
  const tmp = tempOf(dir, 'tmp')
  await rm(tmp, {recursive: true, force: true})
  await mkdir(tmp)
  try {
    const manifest: Record<string, {size: number; sha256: string}> = {}
    for (const f of files) {
      const p = join(tmp, f.name)
      await f.write(p).catch((err) => Promise.reject(fsError(err, join(dir, f.name)))) // a file handle's ENOSPC names no path
      await fsyncPath(p)
      manifest[f.name] = {size: (await stat(p)).size, sha256: await sha256Of(p)}
    }
    await writeFile(join(tmp, MANIFEST_FILE), manifestText(manifest))
    await fsyncPath(join(tmp, MANIFEST_FILE))
    await fsyncPath(tmp)
  } catch (err) {
    await rm(tmp, {recursive: true, force: true})
    throw err
  }
  await swapIn(dir, tmp, new Set([...files.map((f) => f.name), MANIFEST_FILE]))
}

/** old aside, new in, the old one's other entries over, old removed; fsync of the parent between. */
async function swapIn(dir: string, tmp: string, own: Set<string>): Promise<void> {
  const old = tempOf(dir, 'old')
  const had = await exists(dir)
  if (had) {
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error(`EEXIST: file exists, mkdir '${dir}'`), {code: 'EEXIST', path: dir})
    await rename(dir, old)
  }
  await rename(tmp, dir)
  await fsyncPath(dirname(dir))
  if (had) {
    await carryOver(old, dir, own)
    await rm(old, {recursive: true, force: true})
  }
}

/** Moves the entries of `from` that `to` does not have (and that are not a checkpoint's own files) into `to`. */
async function carryOver(from: string, to: string, own: Set<string>): Promise<void> {
  for (const n of [...(await listed(from)), ...(await listed(to))]) own.add(n)
  for (const name of await readdir(from)) {
    if (own.has(name) || name === MANIFEST_FILE || /^\..*\.tmp-\d+$/.test(name)) continue
    if (!(await exists(join(to, name)))) await rename(join(from, name), join(to, name))
  }
}

/** The file names a directory's manifest lists (none without one). */
async function listed(dir: string): Promise<string[]> {
  try {
    const m = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf-8')) as {files?: Record<string, unknown>}
    return Object.keys(m.files ?? {})
  } catch {
    return []
  }
}

/**
 * Repairs what a process killed in writeFilesAtomically left beside `dir`: a temporary
 * directory of a dead process is removed; an old directory set aside by a dead process is put
 * back when `dir` is absent (killed between the two renames), else its other entries are moved
 * over and it is removed. Per-file temporaries of dead processes inside `dir` are removed too.
 * Returns what it did, for a notice.
 */
export async function recoverDir(dir: string): Promise<string[]> {
  dir = resolve(dir)
  const done: string[] = []
  const parent = dirname(dir)
  const prefix = `.${basename(dir)}.`
  const names = await readdir(parent).catch(() => [] as string[])
  for (const name of names) {
    const m = name.startsWith(prefix) ? /^(tmp|old)-(\d+)$/.exec(name.slice(prefix.length)) : null
    if (!m || pidAlive(Number(m[2]))) continue
    const p = join(parent, name)
    if (m[1] === 'tmp') {
      await rm(p, {recursive: true, force: true})
      done.push(`removed the unfinished ${p} of a dead process`)
    } else if (!(await exists(dir))) {
      await rename(p, dir)
      done.push(`restored ${dir} from ${p} (a save was interrupted between its renames)`)
    } else {
      await carryOver(p, dir, new Set())
      await rm(p, {recursive: true, force: true})
      done.push(`removed the replaced ${p} of an interrupted save`)
    }
  }
  await removeDeadFileTemps(dir)
  return done
}

/**
 * recoverDir for a run directory and every checkpoint in it a dead process left half-saved
 * (`.checkpoint-N.tmp-PID` or `.checkpoint-N.old-PID` inside it): what a run's writer does on
 * taking the lock of its --out, resumed or not, so a rank killed mid-save leaves nothing behind.
 */
export async function recoverRun(out: string): Promise<string[]> {
  const names = await readdir(out).catch(() => [] as string[])
  const saved = new Set(names.map((n) => /^\.(.+)\.(?:tmp|old)-\d+$/.exec(n)?.[1]).filter((n) => n !== undefined))
  const done: string[] = []
  // spread-ok: the notices of one folder: one per leftover
  for (const name of saved) done.push(...(await recoverDir(join(out, name)))) // each with its notice
  return [...done, ...(await recoverDir(out))] // then the run directory's own (it is never saved whole)
}

/** What a run's writer repairs before it starts: its --out, and a --resume directory outside it. */
export async function recoverSaves(out: string, resume?: string | null): Promise<string[]> {
  const done = await recoverRun(out)
  const rel = resume ? relative(resolve(out), resolve(resume)) : ''
  // spread-ok: the notices of one folder: one per leftover
  if (resume && (rel.startsWith('..') || isAbsolute(rel))) done.push(...(await recoverDir(resume)))
  return done
}

/** `.NAME.tmp-PID` files (an older per-file scheme; openOutput's) of dead processes inside dir. */
async function removeDeadFileTemps(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names) {
    const m = /\.tmp-(\d+)$/.exec(name)
    if (m && !pidAlive(Number(m[1]))) await rm(join(dir, name), {recursive: true, force: true})
  }
}

/**
 * Checks a checkpoint against its manifest (sizes, then SHA-256): a checkpoint that does not
 * match was not written by one save, and resuming from it would not be exact. A directory
 * without a manifest (Hugging Face's, an older span's) passes unchecked.
 */
export async function verifyManifest(dir: string): Promise<boolean> {
  let text: string
  try {
    text = await readFile(join(dir, MANIFEST_FILE), 'utf-8')
  } catch {
    return false
  }
  const bad = (what: string) =>
    new SpanError(`${dir}: inconsistent checkpoint: ${what}; it was not written by one save (restore it from a copy or start afresh)`)
  let m: {format?: string; files?: Record<string, {size: number; sha256: string}>}
  try {
    m = JSON.parse(text)
  } catch {
    throw bad(`${MANIFEST_FILE} is not valid JSON`)
  }
  if (m.format !== MANIFEST_FORMAT || !m.files || typeof m.files !== 'object') throw bad(`${MANIFEST_FILE} has no file list`)
  for (const [name, want] of Object.entries(m.files)) {
    const p = join(dir, name)
    const s = await stat(p).catch(() => null)
    if (!s) throw bad(`${name} is missing`)
    if (s.size !== want.size) throw bad(`${name} has ${s.size} bytes, the manifest says ${want.size}`)
    if ((await sha256Of(p)) !== want.sha256) throw bad(`${name} does not match its SHA-256 in ${MANIFEST_FILE}`)
  }
  return true
}
