import {Command, Flags, type Interfaces} from '@oclif/core'
import {createWriteStream} from 'node:fs'
import {open, rename, rm, stat} from 'node:fs/promises'
import type {Writable} from 'node:stream'
import {LineWriter, PipeClosed, SpanError, isPipeClosed} from '../core/stream/index.js'
import {UsageError, oneLine} from '../core/util/errors.js'
import {type FlagTable, parseErrorLine} from './voice.js'
import {BINARY_MODES, setMaxLineMb} from '../core/stream/bytelines.js'
import {fsyncPath} from '../core/util/atomic.js'
import {lockDir, releaseAllLocks} from '../core/util/lock.js'
import {launchRank} from '../core/util/launch.js'
import {outputTarget, refuseSharedPaths} from '../core/util/target.js'
import {refuseConflicts} from './flag-conflicts.js'
import {type ErrnoError, describeFsError, errorLine, fsError, isErrno} from '../core/util/fs-errors.js'

export const VERSION = '0.1.0'

// oclif rethrows every stdout error but EPIPE from its own listener, as an uncaught exception
// with a stack trace; the first error is kept instead, and the command reports it in one line
// (a LineWriter sees the same error; a write of `print` or of a library is checked at the end).
let stdoutFailure: Error | null = null
const keepStdoutFailure = (err: Error) => void (stdoutFailure ??= err)
for (const l of process.stdout.listeners('error')) process.stdout.off('error', l as (err: Error) => void)
process.stdout.on('error', keepStdoutFailure)

/**
 * A real-number flag (oclif's integer flags do not take 2e-5), checked against [min, max].
 * Without a default the flag counts only when given (so a --config file can set it).
 */
export function numberFlag(description: string, opts: {default: number; min?: number; max?: number}): Interfaces.OptionFlag<number>
export function numberFlag(description: string, opts?: {min?: number; max?: number}): Interfaces.OptionFlag<number | undefined>
export function numberFlag(description: string, opts: {default?: number; min?: number; max?: number} = {}) {
  const {min = -Infinity, max = Infinity} = opts
  const range = max < Infinity ? ` in [${min}, ${max}]` : min > -Infinity ? ` ≥ ${min}` : ''
  return Flags.custom<number>({
    description,
    ...(opts.default === undefined ? {} : {default: opts.default}),
    parse: async (s) => {
      const x = Number(s)
      if (s.trim() === '' || !Number.isFinite(x) || x < min || x > max) throw new UsageError(`expected a number${range}, got ${s}`)
      return x
    },
  })()
}

/** Flags every streaming command shares (docs/formats.md#conventions). */
export const ioFlags = {
  input: Flags.string({char: 'i', description: 'input file, - for stdin', default: '-'}),
  output: Flags.string({char: 'o', description: 'output file, - for stdout (files are written to a temporary name, then renamed)', default: '-'}),
  'max-line-mb': Flags.integer({
    description: 'longest NDJSON record read, in MB (a longer line is an error at its line; at most 511: a record becomes one string)',
    default: 64,
    min: 1,
    max: 511,
  }),
}

/**
 * `--binary`, for every command that reads raw text (tokenize, vocab, segment-ngrams, fill): what
 * NUL bytes mean (BinaryMode, docs/formats.md#binary-input).
 */
export const binaryFlag = Flags.string({
  description:
    'NUL bytes in text: detect (refuse input that looks binary: mostly NULs or malformed UTF-8 in its first 8 KB, or UTF-16; else read it, dropping NULs as BERT does), text (never refuse), refuse (at the first NUL)',
  options: BINARY_MODES,
  default: 'detect',
})

/** An output target: stdout, or a file that only appears under its name once complete. */
export interface Output {
  name: string // `stdout` or the path, for errors
  writer: LineWriter
  finish(): Promise<void> // flush, close, fsync (the file is complete under its temporary name)
  publish(): Promise<void> // rename into place
  abort(): Promise<void> // drop the temporary file
}

/**
 * stdout as a stream that reports every write error. When stdout is a file, Node's own
 * process.stdout (a SyncWriteStream) ignores a short write(2), so a full disk would cut the
 * output silently (exit 0); an fs.WriteStream on fd 1 writes all bytes or fails with ENOSPC.
 */
export function stdoutStream(): Writable {
  const type = (process.stdout as unknown as {_type?: string})._type
  if (type !== 'fs' && !(type === 'tty' && ttyOffThread)) return process.stdout
  if (!stdoutFile) {
    stdoutFile = createWriteStream('', {fd: 1, autoClose: false}) // one for the whole process: writes stay in order
    stdoutFile.on('error', keepStdoutFailure)
  }
  return stdoutFile
}
let stdoutFile: Writable | null = null
let ttyOffThread = false

/**
 * For training commands: stdout on a terminal (mpirun's pty for rank 0) is then written as a file
 * is, from libuv's thread pool, not by Node's blocking write(2) on the main thread, which a
 * terminal nobody reads holds forever, signal handlers and all (docs/formats.md#stdout-and-signals).
 * Call before the first write to stdout.
 */
export function unblockStdout(): void {
  ttyOffThread = true
}

/** Writes text to stdout and waits until it is written; a write error is thrown (EPIPE as PipeClosed). */
export async function print(text: string): Promise<void> {
  const out = stdoutStream()
  await new Promise<void>((resolve, reject) => {
    const done = (err?: Error | null) => (err ? reject(isPipeClosed(err) ? new PipeClosed() : fsError(err, 'stdout')) : resolve())
    if (out.destroyed) return done(stdoutFailure ?? new PipeClosed())
    out.write(text, 'utf8', done)
  })
}

/**
 * Waits until every byte written to stdout by anyone (print, a LineWriter, process.stdout.write)
 * is written, and returns the first error of those writes other than a closed pipe.
 */
export async function settleStdout(): Promise<Error | null> {
  for (const s of [process.stdout, stdoutFile]) {
    // no empty write to wait on: write(2) of 0 bytes to /dev/full fails, and a command that wrote nothing lost nothing
    while (s && !s.destroyed && s.writableLength > 0) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  await new Promise((resolve) => setImmediate(resolve)) // the error of the last write is emitted on a later tick
  return stdoutFailure && !isPipeClosed(stdoutFailure) ? stdoutFailure : null
}

/**
 * Opens an output: stdout for `-`, else a temporary file beside `path`, opened now, so that a
 * bad output path (no such directory, a directory, no permission) fails before any work.
 */
export async function openOutput(path: string, onFail?: (err: Error) => void): Promise<Output> {
  if (path === '-' || path === '') {
    const writer = new LineWriter(stdoutStream(), onFail)
    return {name: 'stdout', writer, finish: () => writer.end(), publish: async () => {}, abort: async () => {}}
  }
  if ((await stat(path).catch(() => null))?.isDirectory()) throw new SpanError(`${path}: is a directory (EISDIR); give a file name`)
  const target = await outputTarget(path) // a device or FIFO (-o /dev/null) is written in place, never renamed over
  const tmp = target.direct ? target.path : target.tmp
  const fh = await open(tmp, 'w').catch((err) => {
    throw fsError(err, path)
  })
  const stream: Writable = fh.createWriteStream()
  const writer = new LineWriter(stream, onFail)
  return {
    name: path,
    writer,
    async finish() {
      await writer.end()
      if (writer.failure) throw writer.failure // kept: a partly written file must not land
      await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())))
      if (!target.direct) await fsyncPath(tmp)
    },
    publish: async () => {
      if (!target.direct) await rename(tmp, target.path).catch((err) => Promise.reject(fsError(err, path)))
    },
    abort: async () => {
      stream.destroy()
      if (!target.direct) await rm(tmp, {force: true})
    },
  }
}

/** How long a rank other than 0 keeps a usage error to itself: rank 0 says it, and the launcher then ends this rank. */
const RANK_QUIET_MS = 5000

/** A flag error (oclif's parser, or a flag's own parse function): a usage error, exit 2. */
function isUsageError(err: Error & {parse?: unknown}): boolean {
  return (
    err.parse !== undefined ||
    /^Parsing --/.test(err.message) ||
    /^(Nonexistent flag|Unexpected (argument|flag)|Missing \d+ required arg|Expected --)/.test(err.message) ||
    /^Flag --\S+ (can only be specified once|expects )/.test(err.message) // oclif's parser throws these as plain CLIErrors
  )
}

/** A multi-line message (oclif's) as one line, without its "See more help" coda. */
const joinLines = (msg: string): string =>
  msg
    .replace(/\s*See more help with --help\s*$/, '')
    .replace(/\s*\n\s*/g, ': ')
    .replace(/ +:/g, ':')

/**
 * Base of every span command: user errors are one line on stderr and a non-zero exit (usage
 * errors 2, data and filesystem errors 1, see README "Exit codes"); a closed pipe downstream
 * (EPIPE) ends the command quietly with exit 0. Any other write error (a full disk) is an error.
 */
export abstract class SpanCommand extends Command {
  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    if (isPipeClosed(err)) return this.quietExit()
    if (isUsageError(err)) {
      ;(this as unknown as {parsed: boolean}).parsed = true // it did parse: no "did not parse" warning from oclif
      const ctor = this.ctor as unknown as {flags?: FlagTable; args?: Record<string, {description?: string}>}
      const args = Object.entries(ctor.args ?? {}).map(([name, a]) => ({name, description: a.description}))
      return this.fail(parseErrorLine(err.message, ctor.flags ?? {}, args) ?? `${joinLines(err.message)} (see span ${this.name()} --help)`, 2)
    }
    if ((err as Error).name === 'ExitError') return super.catch(err) // this.exit(n)
    const line = errorLine(err)
    return this.fail(line.message, line.exitCode)
  }

  /** Whatever the outcome, no lock of this command outlives it (in-process runs, tests, a failure after locking). */
  protected override async finally(err: Error | undefined): Promise<unknown> {
    releaseAllLocks()
    await this.checkStdout(err)
    return super.finally(err)
  }

  /** A command that ended well but whose stdout was not all written (a full disk) fails: exit 1, one line. */
  private async checkStdout(err: Error | undefined): Promise<void> {
    const failure = await settleStdout()
    if (!failure || (err !== undefined && !isPipeClosed(err)) || (process.exitCode ?? 0) !== 0) return // its error is said
    await this.fail(isErrno(failure) ? describeFsError(failure as ErrnoError, 'stdout') : `stdout: ${failure.message}`, 1)
  }

  /** Parses as oclif does, then applies the flags every stream reader shares (--max-line-mb). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- oclif's own constraint (FlagOutput is not exported)
  protected override async parse<F extends Interfaces.OutputFlags<any>, B extends Interfaces.OutputFlags<any>, A extends Interfaces.OutputArgs<any>>(
    options?: Interfaces.Input<F, B, A>,
    argv?: string[],
  ): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv)
    const file = (parsed.args as Record<string, unknown>).file
    const input = parsed.raw.some((t) => t.type === 'flag' && t.flag === 'input')
    if (typeof file === 'string' && input) {
      throw new UsageError(
        `give the input once: the FILE argument ${JSON.stringify(file)} or --input ${JSON.stringify((parsed.flags as Record<string, unknown>).input)}, not both`,
      )
    }
    const huge = parsed.raw.find((t) => t.type === 'flag' && /^[-+]?\d+$/.test(t.input.trim()) && !Number.isSafeInteger(Number(t.input)))
    if (huge?.type === 'flag') throw new UsageError(`--${huge.flag}: ${huge.input} is past the largest exact integer (${Number.MAX_SAFE_INTEGER})`)
    refuseConflicts(parsed.raw, parsed.flags as Record<string, unknown>, parsed.args as Record<string, unknown>) // --x --no-x; two inputs from stdin
    const mb = (parsed.flags as Record<string, unknown>)['max-line-mb']
    if (typeof mb === 'number') setMaxLineMb(mb)
    await refuseSharedPaths(this.id, parsed.flags as Record<string, unknown>, parsed.args as Record<string, unknown>) // outputs: one file each, never an input
    return parsed
  }

  private name(): string {
    return this.id ? this.id.replaceAll(':', ' ') : ''
  }

  /**
   * The one place an error is printed: one line, control characters escaped (README "Exit codes").
   * A usage error comes from the command line, which a data-parallel launcher gives every rank
   * alike: rank 0 says it, and the launcher ends the other ranks, which wait (RANK_QUIET_MS) before
   * saying it themselves (one line for the job, not one per rank; still one where only this rank's
   * command line was wrong).
   */
  private async fail(message: string, code: number): Promise<void> {
    process.exitCode = code
    if (code === 2 && launchRank() > 0) await new Promise((resolve) => setTimeout(resolve, RANK_QUIET_MS))
    process.stderr.write(oneLine(`${this.id ? `span ${this.name()}` : 'span'}: ${message}`) + '\n')
  }

  private quietExit(): void {
    process.exitCode = 0
  }

  /** Runs `body` holding the lock of output directory `dir` (two runs never write into one). */
  protected async withLockedDir<T>(dir: string, log: (line: string) => void, body: () => Promise<T>): Promise<T> {
    const lock = await lockDir(dir, log)
    try {
      return await body()
    } finally {
      lock.release()
    }
  }

  /** Runs `body` with an output, committing it on success and discarding it on failure. */
  protected async withOutput(path: string, body: (w: LineWriter) => Promise<void>, onFail?: (err: Error) => void): Promise<void> {
    await this.withOutputs([path], ([w]) => body(w), onFail)
  }

  /**
   * Runs `body` with several outputs (undefined: none), which land together: all are opened
   * first (a bad path fails before the work), all written and fsynced, then all renamed into
   * place; on any failure none is, and their temporary files are removed.
   */
  protected async withOutputs(paths: (string | undefined)[], body: (w: LineWriter[]) => Promise<void>, onFail?: (err: Error) => void): Promise<void> {
    const outs: Output[] = []
    try {
      for (const p of paths) if (p !== undefined) outs.push(await openOutput(p, onFail))
      let i = 0
      await body(paths.map((p) => (p === undefined ? (null as unknown as LineWriter) : outs[i++].writer)))
      for (const o of outs) await o.finish()
      for (const o of outs) await o.publish()
    } catch (err) {
      await Promise.all(outs.map((o) => o.abort().catch(() => {})))
      if (err instanceof PipeClosed) return
      const failed = outs.find((o) => o.writer.failure === err)
      throw failed ? fsError(err, failed.name) : err
    }
  }
}
