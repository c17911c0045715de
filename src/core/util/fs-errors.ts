import {SpanError, internalError, quote} from './errors.js'

/**
 * Node's filesystem and allocation errors as the one-line `PATH: reason (CODE)` of a user
 * error (docs/cli.md "Errors and exit codes"). A temporary name (`x.tmp-PID`, `.x.tmp-PID`)
 * is shown as the output it stands for: the user never typed the temporary one.
 */
export const REASONS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory (a path component is a file)',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  EEXIST: 'a file is in the way',
  EFBIG: 'file too large',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  EIO: 'input/output error',
  ELOOP: 'too many symbolic links',
  ENOTEMPTY: 'directory not empty',
  EBUSY: 'resource busy',
  EXDEV: 'cross-device link',
}

export type ErrnoError = Error & {code?: string; path?: string; dest?: string; syscall?: string}

/** True for an error Node raised from a system call (it has an `E…` code). */
export function isErrno(err: unknown): boolean {
  const code = (err as {code?: unknown} | null)?.code
  return err instanceof Error && typeof code === 'string' && /^E[A-Z0-9]+$/.test(code)
}

/** The user-facing path of a temporary name: `dir/.f.tmp-12` → `dir/f`, `f.tmp-12` → `f`. */
export function untemp(path: string): string {
  return path.replace(/(^|\/)\.([^/]+)\.(tmp|old)-\d+$/, '$1$2').replace(/\.tmp-\d+$/, '')
}

/** `PATH: reason (CODE)` for an errno error; `what` names the path when the error has none. */
export function describeFsError(err: ErrnoError, what?: string): string {
  const code = err.code ?? ''
  const reason = REASONS[code] ? `${REASONS[code]} (${code})` : err.message.split('\n')[0]
  const path = what ?? (err.path ? untemp(err.dest && code === 'EISDIR' ? err.dest : err.path) : null)
  return path ? `${quote(path)}: ${reason}` : reason
}

/** A SpanError (exit 1) for an errno error; anything else is returned as it is. */
export function fsError(err: unknown, what?: string): unknown {
  return isErrno(err) ? new SpanError(describeFsError(err as ErrnoError, what)) : err
}

/** A RangeError from an allocation (`Invalid typed array length`, `Array buffer allocation failed`). */
export function isAllocationError(err: unknown): err is RangeError {
  return err instanceof RangeError && /array (buffer )?(allocation|length)|invalid (typed )?array length|out of memory/i.test(err.message)
}

/** Node's ERR_STRING_TOO_LONG: an input decoded to one string longer than V8 allows (about 512 MB). */
export const isStringTooLong = (err: unknown): boolean => (err as {code?: unknown} | null)?.code === 'ERR_STRING_TOO_LONG'

/**
 * Any error that is not a flag's as span's one line and exit code (SpanCommand's catch, a rank's
 * failure under a data-parallel launcher): a SpanError's own words, an errno error as
 * `PATH: reason (CODE)`, an allocation as out of memory, anything else an internal error.
 */
export function errorLine(err: unknown): {message: string; exitCode: number} {
  if (err instanceof SpanError) return {message: err.message, exitCode: err.exitCode}
  if (isErrno(err)) return {message: describeFsError(err as ErrnoError), exitCode: 1}
  if (isAllocationError(err)) return {message: `out of memory: ${err.message} (a model or input too large for this machine?)`, exitCode: 1}
  if (isStringTooLong(err)) return {message: 'an input too large to read as one string (over 512 MB): a file or line this command holds whole', exitCode: 1}
  return {message: internalError(err instanceof Error ? err : new Error(String(err))), exitCode: 1}
}

/**
 * What a training run does when its metrics cannot be written: a closed pipe (`| head`) costs
 * nothing but the metrics (one notice, training goes on, exit 0); any other write error (a full
 * disk) is noted at once, training still goes on to its checkpoint, and the run ends with one
 * line and exit 1.
 */
export function metricsLoss(log: (line: string) => void, out: string) {
  let lost: Error | null = null
  const explain = (err: unknown): unknown => {
    if (err !== lost || lost === null || (lost as {name?: string}).name === 'PipeClosed') return err
    const why = isErrno(lost) ? describeFsError(lost as ErrnoError, 'metrics output') : `metrics output: ${lost.message}`
    return new SpanError(`${why}; the metrics after that point were lost; the checkpoint in ${out} is saved`)
  }
  return {
    onFail(err: Error): void {
      lost = err
      const closed = err.name === 'PipeClosed'
      log(
        `${closed ? 'stdout closed' : describeFsError(err as ErrnoError, 'metrics output')}: metrics are no longer written; training goes on (checkpoints in ${out})`,
      )
    },
    explain,
    check(): void {
      if (lost && lost.name !== 'PipeClosed') throw explain(lost)
    },
  }
}

/**
 * The error of reading `path`: a SpanError as it is (a bound passed), ENOENT as `PATH: notFound`,
 * anything else as `PATH: reason (CODE)`: a permission error is never reported as "not found"
 * (issue 25, cause 11).
 */
export function readError(err: unknown, path: string, notFound = 'file not found'): SpanError {
  if (err instanceof SpanError) return err
  if ((err as {code?: string} | null)?.code === 'ENOENT') return new SpanError(`${path}: ${notFound}`)
  return new SpanError(isErrno(err) ? describeFsError(err as ErrnoError, path) : `${path}: ${(err as Error).message}`)
}
