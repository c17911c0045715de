import {Command, Flags, type Interfaces} from '@oclif/core'
import {createWriteStream} from 'node:fs'
import {rename, rm} from 'node:fs/promises'
import type {Writable} from 'node:stream'
import {LineWriter, PipeClosed, SpanError, isPipeClosed} from './core/stream/index.js'

export const VERSION = '0.1.0'

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
      if (s.trim() === '' || !Number.isFinite(x) || x < min || x > max) throw new Error(`expected a number${range}, got ${s}`)
      return x
    },
  })()
}

/** Flags every streaming command shares (docs/formats.md#conventions). */
export const ioFlags = {
  input: Flags.string({char: 'i', description: 'input file, - for stdin', default: '-'}),
  output: Flags.string({char: 'o', description: 'output file, - for stdout (files are written to a temporary name, then renamed)', default: '-'}),
}

/** An output target: stdout, or a file that only appears under its name once complete. */
export interface Output {
  writer: LineWriter
  commit(): Promise<void> // flush, close, rename into place
  abort(): Promise<void> // drop the temporary file
}

export async function openOutput(path: string): Promise<Output> {
  if (path === '-' || path === '') {
    const writer = new LineWriter(process.stdout)
    return {writer, commit: () => writer.end(), abort: async () => {}}
  }
  const tmp = `${path}.tmp-${process.pid}`
  const stream: Writable = createWriteStream(tmp)
  const writer = new LineWriter(stream)
  return {
    writer,
    async commit() {
      await writer.end()
      await new Promise<void>((resolve, reject) => stream.end((err?: Error | null) => (err ? reject(err) : resolve())))
      await rename(tmp, path)
    },
    abort: () => rm(tmp, {force: true}),
  }
}

/**
 * Base of every span command: user errors are one line on stderr and a non-zero exit;
 * a closed pipe downstream ends the command quietly with exit 0.
 */
export abstract class SpanCommand extends Command {
  protected override async catch(err: Error & {exitCode?: number; oclif?: {exit?: number}}): Promise<unknown> {
    if (isPipeClosed(err)) return this.quietExit()
    if (err instanceof SpanError) {
      const name = this.id ? `span ${this.id.replaceAll(':', ' ')}` : 'span'
      process.stderr.write(`${name}: ${err.message}\n`)
      process.exitCode = err.exitCode
      return
    }
    return super.catch(err)
  }

  private quietExit(): void {
    process.exitCode = 0
  }

  /** Runs `body` with an output, committing it on success and discarding it on failure. */
  protected async withOutput(path: string, body: (w: LineWriter) => Promise<void>): Promise<void> {
    const out = await openOutput(path)
    try {
      await body(out.writer)
      await out.commit()
    } catch (err) {
      await out.abort()
      if (err instanceof PipeClosed) return
      throw err
    }
  }
}
