/**
 * Writing a chart (`inspect --svg`, `plot --svg`): checked before any input is read, so a bad
 * path fails at once, and written to a temporary name then renamed, so the file appears whole
 * or not at all. Errors name the flag: `--svg out.svg: cannot write there (no such directory)`.
 */
import {constants} from 'node:fs'
import {access, rename, rm, stat, writeFile} from 'node:fs/promises'
import {dirname, resolve} from 'node:path'
import {SpanError} from '../stream/errors.js'
import {REASONS} from '../util/fs-errors.js'
import {outputTarget} from '../util/target.js'

function fsReason(err: unknown): string {
  const code = (err as {code?: string}).code
  const reasons: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'permission denied',
    ENOENT: 'no such directory',
    ENOTDIR: 'not a directory',
    EISDIR: 'is a directory',
    EROFS: 'read-only file system',
  }
  if (code && reasons[code]) return reasons[code]
  if (code && REASONS[code]) return `${REASONS[code]} (${code})` // ENOSPC, EIO, …: Node's "ENOSPC: no space left on device, write" never reaches the user
  return (err as Error).message
}

/** Fails before any input is read when the chart could not be written. */
export async function checkChartPath(path: string, flag = '--svg'): Promise<void> {
  const isDir = await stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  )
  if (isDir) throw new SpanError(`${flag} ${path}: is a directory`)
  const parent = dirname(resolve(path))
  try {
    if (!(await stat(parent)).isDirectory()) throw Object.assign(new Error(parent), {code: 'ENOTDIR'})
    await access(parent, constants.W_OK)
  } catch (err) {
    throw new SpanError(`${flag} ${path}: cannot write there (${fsReason(err)})`)
  }
}

/** Written to a temporary name, then renamed: the chart appears whole or not at all. */
export async function writeChartFile(path: string, text: string, flag = '--svg'): Promise<void> {
  const target = await outputTarget(path, (base) => `${base}.tmp-${process.pid}`)
  const tmp = target.direct ? null : target.tmp
  try {
    await writeFile(tmp ?? target.path, text)
    if (tmp) await rename(tmp, target.path)
  } catch (err) {
    if (tmp) await rm(tmp, {force: true}).catch(() => {})
    throw new SpanError(`${flag} ${path}: cannot write (${fsReason(err)})`)
  }
}
