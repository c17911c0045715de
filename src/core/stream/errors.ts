/** An error a user caused (bad input, bad flags): printed as one line, never with a stack. */
export class SpanError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'SpanError'
  }
}

/** `source:line: message`, the ndjson-cli convention for errors that point into an input. */
export function errorAt(source: string, line: number, message: string): SpanError {
  return new SpanError(`${source}:${line}: ${message}`)
}

/** Thrown when the reader downstream went away (`| head`): the command ends quietly with 0. */
export class PipeClosed extends Error {
  constructor() {
    super('downstream pipe closed')
    this.name = 'PipeClosed'
  }
}

/**
 * Only EPIPE (and our PipeClosed) means the reader went away. ERR_STREAM_DESTROYED is not: a
 * stream is destroyed after any error, and a full disk must never pass for a closed pipe.
 */
export function isPipeClosed(err: unknown): boolean {
  if (err instanceof PipeClosed) return true
  return (err as {code?: string} | null)?.code === 'EPIPE'
}
