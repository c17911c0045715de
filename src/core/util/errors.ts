/**
 * An error a user caused: printed as one line, never with a stack. The exit code follows one
 * rule (README "Exit codes"): a flag's value that is wrong on its own or with other flags is a
 * usage error, 2 (throw UsageError); a file's content or the filesystem is a data error, 1
 * (throw SpanError). Which one is decided where the error is made, never by its wording.
 */
export class SpanError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'SpanError'
  }
}

/** A flag value wrong on its own or with other flags, a missing flag or argument: exit 2. */
export class UsageError extends SpanError {
  constructor(message: string) {
    super(message, 2)
    this.name = 'UsageError'
  }
}

/**
 * A message as one terminal line: control characters (a newline in a path, an escape sequence
 * in an input excerpt) written as escapes, so an error can neither split nor drive the terminal.
 */
export function oneLine(message: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what this replaces
  return message.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => {
    const named: Record<string, string> = {'\n': '\\n', '\r': '\\r', '\t': '\\t'}
    return named[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`
  })
}

/**
 * A path or an input excerpt as it appears in an error: as it is, unless it has a control
 * character or blank ends, or is empty; then JSON-quoted (oneLine escapes the rest).
 */
export function quote(s: string): string {
  // eslint-disable-next-line no-control-regex -- the control characters are what this looks for
  return s !== '' && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029]|^\s|\s$/.test(s) ? s : JSON.stringify(s)
}

/** `source:line: message`, the ndjson-cli convention for errors that point into an input (`-` is named stdin). */
export function errorAt(source: string, line: number, message: string): SpanError {
  return new SpanError(`${source === '-' ? 'stdin' : quote(source)}:${line}: ${message}`)
}

/** `source: message` for an error about a whole input (`-` is named stdin, as errorAt names it). */
export function errorIn(source: string, message: string): SpanError {
  return new SpanError(`${source === '-' ? 'stdin' : quote(source)}: ${message}`)
}

/** V8's longest string (UTF-16 code units): UTF-8 of at most this many bytes decodes to one string. */
export const MAX_STRING_LENGTH = 0x1fffffe8

/** A whole input as one string; one larger than a string can hold is an error naming it. */
export function decodeWhole(bytes: Buffer, source: string): string {
  if (bytes.length > MAX_STRING_LENGTH) throw errorIn(source, `${Math.round(bytes.length / 2 ** 20)} MB, more than one string holds (512 MB); this command reads the file whole`)
  return bytes.toString('utf8')
}

/**
 * The one line for an exception no check of span's anticipated (a bug): named as such, never a
 * stack trace on the user's terminal (SPAN_DEBUG=1 prints it too).
 */
export function internalError(err: Error): string {
  if (process.env.SPAN_DEBUG) process.stderr.write(`${err.stack ?? err.message}\n`)
  return `internal error: ${err.name}: ${err.message} (a bug in span: please report it with the command line; SPAN_DEBUG=1 shows where)`
}
