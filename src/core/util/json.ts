/**
 * Reading whole JSON files (SQuAD datasets, predictions, na-probs; a checkpoint's config.json,
 * finetune_config.json, --config) with one-line errors that name the file and, for syntax
 * errors, the line and column (JSON.parse does not always say, and may echo the input).
 */
import {type FileKind, readWholeSync} from './read-whole.js'
import {decodeWhole, errorAt, errorIn, SpanError} from './errors.js'
import {readStdinSync} from './stdin.js'

/** A whole UTF-8 file (`-`: stdin); a missing or unreadable one is a SpanError naming it. */
export function readTextFile(path: string, kind: FileKind = 'task'): string {
  try {
    return decodeWhole(path === '-' ? readStdinSync(kind) : readWholeSync(path, kind), path)
  } catch (err) {
    if (err instanceof SpanError) throw err
    const code = (err as {code?: string}).code
    throw errorIn(path, `${code === 'ENOENT' ? 'file not found' : `cannot read (${code ?? (err as Error).message})`}`)
  }
}

/** Parses one whole JSON file; empty, unreadable or malformed files are SpanErrors naming it. */
export function readJsonFile(path: string): unknown {
  return parseJsonText(readTextFile(path), path)
}

/** JSON.parse with the error's place as `source:line: ... (column c)`; a leading BOM is skipped. */
export function parseJsonText(text: string, source: string): unknown {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
  if (text.trim() === '') throw errorIn(source, `empty file, expected JSON`)
  try {
    return JSON.parse(text)
  } catch {
    const {offset, message} = jsonErrorAt(text)
    const before = text.slice(0, offset)
    const line = before.split('\n').length
    const column = offset - before.lastIndexOf('\n')
    throw errorAt(source, line, `invalid JSON at column ${column}: ${message}`)
  }
}

/** The first syntax error of a text JSON.parse refused: its UTF-16 offset and what was expected. */
export function jsonErrorAt(text: string): {offset: number; message: string} {
  const s = new JsonScan(text)
  try {
    s.value()
    s.ws()
    if (s.pos < text.length) s.fail('unexpected data after the JSON value')
  } catch (err) {
    if (err instanceof ScanError) return {offset: err.offset, message: err.message}
    throw err
  }
  return {offset: 0, message: 'not valid JSON'} // JSON.parse refused what the scan accepts: not expected
}

class ScanError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message)
  }
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y
// eslint-disable-next-line no-control-regex -- JSON forbids raw control characters in strings: the class names them
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y

/** A recursive-descent JSON syntax scan (RFC 8259) that only finds where a text goes wrong. */
class JsonScan {
  pos = 0
  constructor(private readonly text: string) {}

  fail(message: string): never {
    throw new ScanError(message, this.pos)
  }

  ws(): void {
    while (' \t\n\r'.includes(this.text[this.pos] ?? 'x')) this.pos++
  }

  value(): void {
    this.ws()
    const c = this.text[this.pos]
    if (c === undefined) this.fail('unexpected end of file')
    if (c === '{') return this.container('}', true)
    if (c === '[') return this.container(']', false)
    if (c === '"') return this.match(STRING, 'bad string (unescaped control character, bad escape or no closing quote)')
    if (c === '-' || (c >= '0' && c <= '9')) return this.match(NUMBER, 'bad number')
    for (const lit of ['true', 'false', 'null']) if (this.text.startsWith(lit, this.pos)) return void (this.pos += lit.length)
    this.fail(`unexpected character ${JSON.stringify(c)}`)
  }

  private match(re: RegExp, message: string): void {
    re.lastIndex = this.pos
    if (!re.test(this.text)) this.fail(message)
    this.pos = re.lastIndex
  }

  /** An object (members "key": value) or an array, after its opening bracket. */
  private container(close: string, isObject: boolean): void {
    this.pos++
    this.ws()
    if (this.text[this.pos] === close) return void this.pos++
    for (;;) {
      if (isObject) this.member()
      else this.value()
      this.ws()
      const c = this.text[this.pos]
      if (c === ',') this.pos++
      else if (c === close) return void this.pos++
      else this.fail(`expected ',' or '${close}'`)
    }
  }

  private member(): void {
    this.ws()
    if (this.text[this.pos] !== '"') this.fail('expected a double-quoted property name')
    this.match(STRING, 'bad string')
    this.ws()
    if (this.text[this.pos] !== ':') this.fail("expected ':' after the property name")
    this.pos++
    this.value()
  }
}

/**
 * The keys of a top-level JSON object in file order (first occurrence), which JSON.parse does
 * not keep for integer-like keys. The text must already be valid JSON (checked by the caller).
 */
export function objectKeysInFileOrder(text: string): string[] {
  const keys: string[] = []
  const seen = new Set<string>()
  let depth = 0
  let expectKey = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '"') {
      STRING.lastIndex = i
      STRING.test(text)
      const end = STRING.lastIndex
      if (depth === 1 && expectKey) {
        const key = JSON.parse(text.slice(i, end)) as string
        if (!seen.has(key)) keys.push(key)
        seen.add(key)
      }
      i = end - 1
      expectKey = false
    } else if (c === '{' || c === '[') {
      depth++
      expectKey = c === '{' && depth === 1
    } else if (c === '}' || c === ']') depth--
    else if (c === ',' && depth === 1) expectKey = true
  }
  return keys
}
