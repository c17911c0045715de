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

/** V8's longest string (UTF-16 code units): UTF-8 of at most this many bytes decodes to one string. */
export const MAX_STRING_LENGTH = 0x1fffffe8

/** A whole input as one string; one larger than a string can hold is an error naming it. */
export function decodeWhole(bytes: Buffer, source: string): string {
  if (bytes.length > MAX_STRING_LENGTH) throw errorIn(source, `${Math.round(bytes.length / 2 ** 20)} MB, more than one string holds (512 MB); this command reads the file whole`)
  return bytes.toString('utf8')
}
