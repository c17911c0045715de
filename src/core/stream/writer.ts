import type {Writable} from 'node:stream'
import {PipeClosed, isPipeClosed} from './errors.js'

const CHUNK = 1 << 16 // bytes buffered before one write(): fewer syscalls, one await per chunk

/**
 * Line-oriented output with backpressure. `| head` closing the pipe surfaces as PipeClosed,
 * which commands turn into a quiet exit 0.
 */
export class LineWriter {
  private parts: string[] = []
  private size = 0
  private failed: Error | null = null

  constructor(private readonly out: Writable) {
    out.on('error', (err) => {
      this.failed = isPipeClosed(err) ? new PipeClosed() : err
    })
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

  async end(): Promise<void> {
    await this.flush()
    if (this.failed) throw this.failed
  }

  private async push(chunk: string | Buffer): Promise<void> {
    if (this.failed) throw this.failed
    if (this.out.destroyed || this.out.writableEnded) throw new PipeClosed()
    const ok = this.out.write(chunk)
    if (!ok) await this.drained()
    if (this.failed) throw this.failed
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.out.off('drain', done)
        this.out.off('error', done)
        this.out.off('close', done)
        resolve()
      }
      this.out.on('drain', done)
      this.out.on('error', done)
      this.out.on('close', done)
    })
  }
}
