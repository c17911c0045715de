import {constants} from 'node:fs'
import {access, mkdir, stat, statfs} from 'node:fs/promises'
import {dirname, isAbsolute, relative} from 'node:path'
import {SpanError} from './errors.js'

/**
 * mkdir -p one level at a time: Node's recursive mkdir never returns for a path under /proc whose
 * parent is missing (it retries forever), so each level is made, and its error reported, on its own.
 */
export async function makeDirs(dir: string): Promise<void> {
  const st = await stat(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? null : Promise.reject(err)))
  if (st?.isDirectory()) return
  if (st) throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${dir}'`), {code: 'ENOTDIR', path: dir})
  const parent = dirname(dir)
  if (parent !== dir) await makeDirs(parent)
  await mkdir(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'EEXIST' ? undefined : Promise.reject(err)))
}

const missing = (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' || err.code === 'ENOTDIR' ? null : Promise.reject(err)) // ENOTDIR: a file above it, found on the way up
const errno = (code: string, path: string) => Object.assign(new Error(`${code}: ${path}`), {code, path})

/**
 * Whether makeDirs(dir) could make `dir` and a run write there, checked without making anything (a
 * run checks everything before it creates anything, so a bad --out is said before the run reads and
 * announces its inputs): the nearest existing ancestor must be a writable directory on a file system
 * with room left (ENOTDIR, EACCES, EROFS, ENOSPC otherwise). A file system without block counts
 * (/proc, /sys) is left to the write itself.
 */
export async function checkMakeable(dir: string, minFree = 1 << 20): Promise<void> {
  let path = dir
  let st = await stat(path).catch(missing)
  while (!st && dirname(path) !== path) {
    path = dirname(path)
    st = await stat(path).catch(missing)
  }
  if (!st) return
  if (!st.isDirectory()) {
    if (path === dir) throw new SpanError(`${dir}: a file is in the way (EEXIST); give a directory`)
    throw errno('ENOTDIR', path)
  }
  await access(path, constants.W_OK)
  const fs = await statfs(path)
  if (fs.blocks > 0 && fs.bavail * fs.bsize < minFree) throw errno('ENOSPC', dir)
}

/**
 * A path as errors show it: relative to the working directory when it lies inside it (a run saves
 * its inputs as absolute paths so that --resume works from anywhere; its errors still read
 * `train.ndjson:3:` as the user typed it), else as it is.
 */
export function shownPath(path: string): string {
  if (!isAbsolute(path)) return path
  const rel = relative(process.cwd(), path)
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}
