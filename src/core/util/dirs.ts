import {mkdir, stat} from 'node:fs/promises'
import {dirname, isAbsolute, relative} from 'node:path'

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
