/**
 * Writing files into a directory span does not own (issue 25, cause 1): `predict squad -o DIR`,
 * `predict mrqa -o DIR`, `export --to DIR`. DIR may be the user's working directory, a symbolic
 * link, a mount point, or hold files of other users and tools; span writes only the files it
 * produces. Each lands atomically (a temporary `.NAME.tmp-PID` in the same directory, fsync,
 * rename over NAME); all are written before the first is renamed; a manifest, where the set
 * matters (a checkpoint), is removed first and written last, so it is present only when every file
 * it lists is this write's. DIR itself is made if absent and never renamed, replaced or emptied,
 * and nothing else in it is moved, renamed or deleted: a symbolic link stays a link (the files go
 * where it points), a read-only directory fails at its first temporary file and keeps its files.
 */
import {lstat, readdir, rename, rm, rmdir, stat, unlink, writeFile} from 'node:fs/promises'
import {dirname, join, resolve} from 'node:path'
import {MANIFEST_FILE, fsyncPath as fsync, manifestText, pidAlive, sha256Of as sha256} from './atomic.js'
import {SpanError} from './errors.js'
import {makeDirs} from './dirs.js'
import {fsError} from './fs-errors.js'
import {outputTarget, type OutputTarget} from './target.js'

/** A file written by `write` to the temporary path it is given. */
export interface OutputFile {
  name: string
  write(tmpPath: string): Promise<void>
}

const tempName = (base: string) => `.${base}.tmp-${process.pid}`

/** The target of DIR/NAME, refused when NAME is a directory there (a rename would fail late, or replace an empty one). */
async function targetOf(dir: string, name: string): Promise<OutputTarget> {
  const path = join(dir, name)
  if ((await stat(path).catch(() => null))?.isDirectory()) throw new SpanError(`${path}: is a directory (EISDIR); span writes a file of that name there`)
  return outputTarget(path, tempName)
}

/** Removes the temporary files of our own names that a killed earlier run (a dead pid) left in dir. */
async function removeDeadTemps(dir: string, names: string[]): Promise<void> {
  const ours = new Set(names)
  for (const entry of await readdir(dir).catch(() => [] as string[])) {
    const m = /^\.(.+)\.tmp-(\d+)$/.exec(entry)
    if (m && ours.has(m[1]) && !pidAlive(Number(m[2]))) await rm(join(dir, entry), {force: true})
  }
}

/** Writes `files` into `dir` as the module comment says; on failure no temporary file is left and no file replaced. */
export async function writeFilesInto(dir: string, files: OutputFile[], o: {manifest: boolean}): Promise<void> {
  const made = await missingDirs(dir)
  try {
    await makeDirs(dir).catch((err) => Promise.reject(fsError(err, dir)))
    await writeAll(dir, files, o)
  } catch (err) {
    for (const d of made) await rmdir(d).catch(() => {}) // the folders this call made, if still empty: nothing left behind
    throw err
  }
}

const present = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  )

/** dir and those of its ancestors that do not exist yet, innermost first. */
async function missingDirs(dir: string): Promise<string[]> {
  const out: string[] = []
  for (let d = resolve(dir); dirname(d) !== d && !(await present(d)); d = dirname(d)) out.push(d)
  return out
}

async function writeAll(dir: string, files: OutputFile[], o: {manifest: boolean}): Promise<void> {
  await removeDeadTemps(dir, [...files.map((f) => f.name), ...(o.manifest ? [MANIFEST_FILE] : [])])
  const staged: {target: OutputTarget; file: OutputFile}[] = []
  for (const file of files) staged.push({target: await targetOf(dir, file.name), file})
  const sums: Record<string, {size: number; sha256: string}> = {}
  try {
    for (const {target, file} of staged) {
      const tmp = target.direct ? target.path : target.tmp
      await file.write(tmp).catch((err) => Promise.reject(fsError(err, join(dir, file.name))))
      if (target.direct) continue // a device or FIFO: written in place, nothing to sum
      await fsync(tmp)
      sums[file.name] = {size: (await stat(tmp)).size, sha256: await sha256(tmp)}
    }
    if (o.manifest)
      await unlink(join(dir, MANIFEST_FILE)).catch((err) => (err.code === 'ENOENT' ? undefined : Promise.reject(fsError(err, join(dir, MANIFEST_FILE)))))
    for (const {target, file} of staged)
      if (!target.direct) await rename(target.tmp, target.path).catch((err) => Promise.reject(fsError(err, join(dir, file.name))))
    await syncDirs(staged.map((s) => s.target))
    if (o.manifest) await writeManifest(dir, MANIFEST_FILE, manifestText(sums))
  } catch (err) {
    await Promise.all(staged.map(({target}) => (target.direct ? undefined : rm(target.tmp, {force: true}))))
    throw err
  }
}

/** The manifest through its own temporary file: it appears whole, after every file it lists. */
async function writeManifest(dir: string, name: string, text: string): Promise<void> {
  const target = await targetOf(dir, name)
  const tmp = target.direct ? target.path : target.tmp
  try {
    await writeFile(tmp, text).catch((err) => Promise.reject(fsError(err, join(dir, name))))
    if (target.direct) return
    await fsync(tmp)
    await rename(tmp, target.path).catch((err) => Promise.reject(fsError(err, join(dir, name))))
    await syncDirs([target])
  } catch (err) {
    if (!target.direct) await rm(tmp, {force: true})
    throw err
  }
}

/** fsync of each directory a rename happened in (what makes the renames durable). */
async function syncDirs(targets: OutputTarget[]): Promise<void> {
  for (const d of new Set(targets.filter((t) => !t.direct).map((t) => dirname(t.path)))) await fsync(d)
}
