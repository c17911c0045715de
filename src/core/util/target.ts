/**
 * Where an output file is written. A regular file (or a new name) is written to a temporary
 * sibling of its real path and renamed over it, so it lands whole or not at all, and a symbolic
 * link keeps pointing at the file it names. Anything else that exists (a character device such
 * as /dev/null or /dev/stdout, a FIFO from `<(…)`/`>(…)`, a socket) is written in place: a
 * rename would replace the device node or the pipe with a plain file (as root, /dev/null itself).
 */
import {realpath, stat} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'

export type OutputTarget = {direct: true; path: string} | {direct: false; path: string; tmp: string}

/** The target of `path`: written in place (direct), or through `tmp` renamed onto `path`. */
export async function outputTarget(path: string, tmpName = (base: string) => `.${base}.tmp-${process.pid}`): Promise<OutputTarget> {
  const s = await stat(path).catch(() => null) // follows links
  if (s && !s.isFile() && !s.isDirectory()) return {direct: true, path}
  const real = s ? await realpath(path) : path
  return {direct: false, path: real, tmp: join(dirname(real), tmpName(basename(real)))}
}
