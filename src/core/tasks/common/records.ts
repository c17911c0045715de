/**
 * Reading task files whose records are JSON objects: a JSON list (TACRED as distributed) or
 * JSON lines (SemEval in TACRED's keys, SNLI/MultiNLI, MRQA, SWAG's JSON form), plain or gzip.
 * Each record keeps the line it starts on, so errors can say `source:line: message`.
 */
import {gunzipSync} from 'node:zlib'
import {SpanError, decodeWhole, errorAt, errorIn} from '../../util/errors.js'
import {type FileKind, LIMITS, readWholeSync, tooLarge} from '../../util/read-whole.js'
import {readStdinSync} from '../../util/stdin.js'
import {parseJsonText} from '../squad/json.js'
import {shownValue} from '../../util/json-value.js'

export interface JsonRecord {
  value: unknown
  line: number
}

/** A whole file as text (`-`: stdin); gzip (by its magic bytes) is inflated; a BOM is dropped. */
export function readTaskText(path: string, kind: FileKind = 'task'): string {
  let bytes: Buffer
  try {
    bytes = path === '-' ? readStdinSync(kind) : readWholeSync(path, kind)
  } catch (err) {
    if (err instanceof SpanError) throw err
    const code = (err as {code?: string}).code
    throw errorIn(path, `${code === 'ENOENT' ? 'file not found' : code === 'EISDIR' ? 'is a directory' : `cannot read (${code})`}`)
  }
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes, {maxOutputLength: LIMITS[kind]}) // a gzip bomb stops at the bound
    } catch (err) {
      if ((err as {code?: string}).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge(path, kind)
      throw errorIn(path, `corrupt gzip data`)
    }
  }
  const text = decodeWhole(bytes, path)
  if (text.includes('\u0000')) throw errorIn(path, `binary input (NUL byte); expected UTF-8 text`)
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}

/** The records of a JSON list (`[` first) or of JSON lines (blank lines skipped). */
export function readJsonRecords(path: string, text = readTaskText(path)): JsonRecord[] {
  const first = text.trimStart()[0]
  if (first === undefined) throw errorIn(path, `empty file`)
  if (first === '[') {
    const list = parseJsonText(text, path)
    if (!Array.isArray(list)) throw errorAt(path, 1, 'expected a JSON list of records')
    const lines = arrayElementLines(text)
    return list.map((value, i) => ({value, line: lines[i] ?? 1}))
  }
  const out: JsonRecord[] = []
  text.split('\n').forEach((raw, i) => {
    const s = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (s.trim() === '') return
    try {
      out.push({value: JSON.parse(s), line: i + 1})
    } catch (err) {
      const doc = out.length === 0 ? oneDocument(text) : null
      if (doc) throw errorAt(path, i + 1, oneDocumentMessage(doc))
      throw errorAt(path, i + 1, `invalid JSON (${(err as Error).message.split('\n')[0]}); expected one JSON object per line or a JSON list`)
    }
  })
  return out
}

/** The whole text as one JSON object, when it is one over several lines (pretty-printed, not JSON lines); else null. */
function oneDocument(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text)
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null
  } catch {
    return null
  }
}

/** What a pretty-printed JSON object is, named; SQuAD's `{"version", "data"}` with the command that reads it. */
function oneDocumentMessage(o: Record<string, unknown>): string {
  const squad = Array.isArray(o.data) && 'version' in o ? ' (SQuAD JSON: span finetune|predict|eval squad read it)' : ''
  return `one JSON object over several lines${squad}; expected one JSON object per line or a JSON list`
}

/** The 1-based line on which each top-level element of a JSON array begins. */
export function arrayElementLines(text: string): number[] {
  const out: number[] = []
  let depth = 0
  let line = 1
  let inString = false
  let expectValue = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '\n') line++
    if (inString) {
      if (c === '\\') i++
      else if (c === '"') inString = false
      continue
    }
    if (depth === 1 && expectValue && !' \t\r\n]'.includes(c)) {
      out.push(line)
      expectValue = false
    }
    if (c === '"') inString = true
    else if (c === '[' || c === '{') {
      depth++
      if (depth === 1) expectValue = true
    } else if (c === ']' || c === '}') depth--
    else if (c === ',' && depth === 1) expectValue = true
  }
  return out
}

/** A record as an object, or an error at its line. */
export function asObject(r: JsonRecord, source: string): Record<string, unknown> {
  if (typeof r.value !== 'object' || r.value === null || Array.isArray(r.value))
    throw errorAt(source, r.line, `expected a JSON object, got ${Array.isArray(r.value) ? 'a list' : JSON.stringify(r.value)}`)
  return r.value as Record<string, unknown>
}

/** A required string field. */
export function stringField(o: Record<string, unknown>, key: string, source: string, line: number): string {
  const v = o[key]
  if (v === undefined) throw errorAt(source, line, `missing field "${key}"`)
  if (typeof v !== 'string') throw errorAt(source, line, `field "${key}" must be a string, got ${shownValue(v)}`)
  return v
}

/** A required non-negative integer field. */
export function indexField(o: Record<string, unknown>, key: string, source: string, line: number): number {
  const v = o[key]
  if (v === undefined) throw errorAt(source, line, `missing field "${key}"`)
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw errorAt(source, line, `field "${key}" must be a non-negative integer, got ${shownValue(v)}`)
  return v
}

/** The lines of a plain-text file (no trailing empty line), e.g. one label per line. */
export function readTextLines(path: string, kind: FileKind = 'task'): string[] {
  const lines = readTaskText(path, kind)
    .split('\n')
    .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop()
  return lines
}
