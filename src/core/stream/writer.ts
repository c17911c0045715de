import type {Writable} from 'node:stream'
import {PipeClosed, isPipeClosed} from './errors.js'

const CHUNK = 1 << 16 // bytes buffered before one write(): fewer syscalls, one await per chunk

/**
 * Line-oriented output with backpressure. `| head` closing the pipe (EPIPE) surfaces as
 * PipeClosed, which commands turn into a quiet exit 0; any other write error (ENOSPC, EIO)
 * surfaces as itself, which commands report as an error (exit 1).
 */
export class LineWriter {
  private parts: string[] = []
  private size = 0
  private failed: Error | null = null
  private last: Promise<void> = Promise.resolve() // the completion of the latest write(2)
  private limit = 0 // patient(): unwritten bytes the stream may hold before a write waits for its reader
  private onStall: (() => void) | null = null
  private unbounded = false // stopWaiting(): no write waits for the reader any more
  private wake: (() => void) | null = null // ends the current wait for the reader

  /**
   * With `onFail`, a write error is reported to it once and later output is dropped instead of
   * thrown (`span pretrain` keeps training when its metrics cannot be written).
   */
  constructor(
    private readonly out: Writable,
    private readonly onFail?: (err: Error) => void,
  ) {
    out.on('error', (err) => {
      this.failed ??= isPipeClosed(err) ? new PipeClosed() : err // the first error is the cause
    })
  }

  /**
   * A training loop's metrics: a write waits for the reader only once `limit` bytes are queued
   * unwritten (in memory, written as the pipe drains), not at the stream's 16 KB, and `onStall`
   * says so once; stopWaiting() ends such a wait for good. A reader that never reads then costs
   * `limit` bytes of memory, and a stop signal is still seen at the next step (docs/formats.md#stdout-and-signals).
   */
  patient(limit: number, onStall?: () => void): this {
    this.limit = limit
    this.onStall = onStall ?? null
    return this
  }

  /** From now on no write waits for the reader (records are queued, none dropped); a waiting one goes on. */
  stopWaiting(): void {
    this.unbounded = true
    this.wake?.()
  }

  /** Queues one line (without its newline); resolves once buffered output is accepted. */
  async line(text: string): Promise<void> {
    this.parts.push(text, '\n')
    this.size += text.length + 1
    if (this.size >= CHUNK) await this.flush()
  }

  async record(obj: unknown): Promise<void> {
    await this.line(JSON.stringify(obj))
  }

  /** Raw bytes or text, already newline-terminated (fast paths build their own bytes). */
  async raw(chunk: string | Buffer): Promise<void> {
    await this.flush()
    await this.push(chunk)
  }

  async flush(): Promise<void> {
    if (this.size === 0 && this.parts.length === 0) return
    const text = this.parts.join('')
    this.parts = []
    this.size = 0
    await this.push(text)
  }

  /**
   * Flushes, then waits until the last write is done: a stream accepts a small write at once
   * and reports its error (ENOSPC on a full disk, /dev/full) only later, after exit if not awaited.
   */
  async end(): Promise<void> {
    await this.flush()
    await this.last
    if (this.failed) await this.fail()
  }

  /** The first write error, if any. */
  get failure(): Error | null {
    return this.failed
  }

  private reported = false

  private async fail(): Promise<void> {
    if (!this.onFail) throw this.failed
    if (!this.reported) this.onFail(this.failed as Error)
    this.reported = true
  }

  private async push(chunk: string | Buffer): Promise<void> {
    if (this.failed) return this.fail()
    if (this.out.destroyed || this.out.writableEnded) {
      this.failed = new PipeClosed()
      return this.fail()
    }
    let ok: boolean
    let written!: () => void
    this.last = new Promise<void>((resolve) => (written = resolve))
    const onWritten = (err?: Error | null) => {
      // a write after the stream was destroyed (by an earlier error, or a closed pipe) is not a cause of its own
      if (err) this.failed ??= isPipeClosed(err) || (err as {code?: string}).code === 'ERR_STREAM_DESTROYED' ? new PipeClosed() : err
      written()
    }
    try {
      ok = this.out.write(chunk, 'utf8', onWritten) // three arguments: a stub of write (oclif's runCommand) calls only a third-argument callback
    } catch (err) {
      written()
      this.failed ??= isPipeClosed(err) ? new PipeClosed() : (err as Error) // stdout on a file writes synchronously
      return this.fail()
    }
    if (!ok && this.mustWait()) await this.drained()
    if (this.failed) return this.fail()
  }

  private mustWait(): boolean {
    if (this.limit === 0) return true
    if (this.unbounded || this.out.writableLength <= this.limit) return false
    this.onStall?.()
    this.onStall = null // said once
    return true
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.wake = null
        this.out.off('drain', done)
        this.out.off('error', done)
        this.out.off('close', done)
        resolve()
      }
      this.wake = done
      this.out.on('drain', done)
      this.out.on('error', done)
      this.out.on('close', done)
    })
  }
}
