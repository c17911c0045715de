/** An error a user caused (bad input, bad flags): printed as one line, never with a stack. */
export class SpanError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'SpanError'
  }
}

/** `source:line: message`, the ndjson-cli convention for errors that point into an input (`-` is named stdin). */
export function errorAt(source: string, line: number, message: string): SpanError {
  return new SpanError(`${source === '-' ? 'stdin' : source}:${line}: ${message}`)
}

/** `source: message` for an error about a whole input (`-` is named stdin, as errorAt names it). */
export function errorIn(source: string, message: string): SpanError {
  return new SpanError(`${source === '-' ? 'stdin' : source}: ${message}`)
}
