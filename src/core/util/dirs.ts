import {mkdir, stat} from 'node:fs/promises'
import {dirname} from 'node:path'

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
