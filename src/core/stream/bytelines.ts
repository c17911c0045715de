import {errorAt, type SpanError} from './errors.js'
import {MAX_STRING_LENGTH} from '../util/errors.js'
import type {Source} from './source.js'

/**
 * Lines framed on bytes, for the hot path of `span tokenize`, which reads ASCII text without
 * decoding it to strings. Same framing as readLines (split2 on /\r?\n/): a `\r` before `\n` is
 * dropped, a last line without `\n` counts, an empty last line does not; a NUL byte is an error
 * at its line. The lines of one chunk come as a batch, so the consumer loops synchronously
 * (an await per line, as with split2, costs more than tokenizing an ASCII line).
 */
export interface LineBatch {
  buf: Buffer // line i is buf[start[i] .. end[i]), without its line break
  start: Int32Array
  end: Int32Array
  count: number
  firstNo: number // 1-based line number of line 0
  /** The batch is one piece (count 1) of a long line that goes on in the next batch (see LongLines). */
  piece?: boolean
}

/**
 * Long raw-text lines in pieces (`span tokenize`): once an unfinished line holds more than
 * `bytes`, everything before the last place `cut` allows is handed on as a piece, so a line of
 * any length takes memory bounded by `bytes` (and by its longest stretch without such a place).
 */
export interface LongLines {
  bytes: number
  /** A position p in (0, e) where buf[0 .. e) may be split into [0, p) and [p, e), or -1. */
  cut(buf: Buffer, e: number): number
}

/** Longest NDJSON record, in bytes (--max-line-mb; 64 MB unless a command sets it). */
let maxRecordBytes = 64 * 2 ** 20
export function setMaxLineMb(mb: number): void {
  maxRecordBytes = mb * 2 ** 20
}
export const maxLineBytes = (): number => maxRecordBytes

/**
 * `maxLine` bounds the bytes of one line (the memory a line may take): a longer one is an
 * error at its line, before it is gathered.
 */
export async function* readLineBatches(src: Source, maxLine = Infinity, binary: BinaryMode = 'refuse', long?: LongLines): AsyncGenerator<LineBatch> {
  let carry: Buffer[] = [] // an unfinished line from earlier chunks
  let carried = 0
  let no = 1
  const batch: LineBatch = {buf: Buffer.alloc(0), start: new Int32Array(1024), end: new Int32Array(1024), count: 0, firstNo: 1}
  const checkNul = binary === 'refuse' ? refuseNul : () => {}
  let first = binary === 'detect'
  let nextTry = long?.bytes ?? Infinity // carried bytes at which to look for a cut (doubles after a failed look)
  for await (const chunk of src.stream as AsyncIterable<Buffer | string>) {
    const part = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (first) sniffText(part.subarray(0, 8192), src.name)
    first = false // only the start of the input is sniffed
    const last = part.lastIndexOf(10)
    if (last < 0) {
      checkNul(part, 0, part.length, no, src.name)
      carry.push(part)
      carried += part.length
      if (carried > maxLine) throw tooLong(src.name, no, maxLine)
      if (long && carried > nextTry) {
        const rest = cutPiece(carry, long, batch, no)
        carry = [rest ?? batch.buf]; carried = carry[0].length
        nextTry = rest ? long.bytes : 2 * carried
        if (rest) yield batch
      }
      continue
    }
    if (carried + last > maxLine) throw tooLong(src.name, no, maxLine)
    const buf = carry.length > 0 ? Buffer.concat([...carry, part]) : part
    const limit = buf.length - (part.length - last - 1)
    carry = limit < buf.length ? [buf.subarray(limit)] : []; carried = buf.length - limit
    nextTry = long?.bytes ?? Infinity
    frame(buf, limit, batch, no, src.name, checkNul)
    no += batch.count
    yield batch
  }
  if (carry.length > 0) {
    frame(Buffer.concat(carry), -1, batch, no, src.name, checkNul) // a last line without `\n` keeps a `\r`, as in split2
    yield batch
  }
}

/** The error of a line longer than --max-line-mb allows, or than one string holds (readLines' bound). */
function tooLong(source: string, no: number, maxLine: number): SpanError {
  if (maxLine !== MAX_STRING_LENGTH) return errorAt(source, no, `a line longer than ${maxLine / 2 ** 20} MB (--max-line-mb); not one record per line?`)
  return errorAt(source, no, 'a line longer than 512 MB, more than one string holds; break it into lines (span tokenize and span vocab read a line of any length)')
}

/**
 * The unfinished line as one piece batch up to the last cut; returns the rest, or null when
 * there is no cut (batch.buf then holds the whole line so far, joined).
 */
function cutPiece(carry: Buffer[], long: LongLines, batch: LineBatch, no: number): Buffer | null {
  const buf = carry.length === 1 ? carry[0] : Buffer.concat(carry)
  batch.buf = buf
  const p = long.cut(buf, buf.length)
  if (p <= 0) return null
  batch.start[0] = 0
  batch.end[0] = p
  batch.count = 1
  batch.firstNo = no
  batch.piece = true
  return buf.subarray(p)
}

/** Splits buf[0 .. limit) into the batch's lines: it ends with `\n`, or limit is -1 for the last line. */
function frame(buf: Buffer, limit: number, batch: LineBatch, no: number, source: string, checkNul: typeof refuseNul): void {
  const stop = limit < 0 ? buf.length : limit
  checkNul(buf, 0, stop, no, source)
  let count = 0
  for (let s = 0; s < stop; ) {
    const nl = limit < 0 ? stop : buf.indexOf(10, s)
    if (count === batch.start.length) grow(batch)
    batch.start[count] = s
    batch.end[count++] = limit >= 0 && nl > s && buf[nl - 1] === 13 ? nl - 1 : nl
    s = nl + 1
  }
  batch.buf = buf
  batch.count = count
  batch.firstNo = no
  batch.piece = false
}

function grow(batch: LineBatch): void {
  const start = new Int32Array(2 * batch.start.length)
  start.set(batch.start)
  const end = new Int32Array(2 * batch.end.length)
  end.set(batch.end)
  batch.start = start
  batch.end = end
}

/**
 * What a text reader does with NUL bytes: `refuse` (record streams: a NUL is never in NDJSON),
 * `detect` (raw text: refuse input that looks binary, else keep NULs, which the tokenizer drops
 * as BERT's _clean_text does), `text` (never refuse).
 */
export type BinaryMode = 'refuse' | 'detect' | 'text'
export const BINARY_MODES: BinaryMode[] = ['detect', 'text', 'refuse']

/**
 * Binary or not, from the first 8 KB, as git's buffer_is_binary and grep look at a prefix; but
 * a few NULs in text do not make it binary (the reference tokenizer reads such text): binary
 * is a UTF-16 byte-order mark (refused by name), or NULs or malformed UTF-8 making up more
 * than a tenth of the bytes.
 */
export function sniffText(head: Buffer, source: string): void {
  if (head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
    const which = head[0] === 0xff ? 'UTF-16LE' : 'UTF-16BE'
    throw errorAt(source, 1, `${which} input (byte-order mark); convert it to UTF-8 (iconv -f ${which} -t UTF-8)`)
  }
  let nul = 0
  for (let i = 0; i < head.length; i++) if (head[i] === 0) nul++
  const text = head.toString('utf8')
  let bad = 0
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0xfffd) bad++
  bad -= (head.toString('latin1').match(/\xef\xbf\xbd/g) ?? []).length // U+FFFD written in the text itself
  if (bad > 3) bad -= 3 // a multi-byte character cut at the 8 KB boundary
  if ((nul + bad) * 10 > head.length && head.length > 0) {
    const line = nul > 0 ? lineOf(head, head.indexOf(0)) : 1 // where the first NUL is, as a person would look for it
    throw errorAt(source, line, `binary input (${nul} NUL and ${Math.max(bad, 0)} malformed UTF-8 bytes in the first ${head.length}); --binary text reads it as text anyway`)
  }
}

/** The 1-based line of byte `at`. */
function lineOf(buf: Buffer, at: number): number {
  let line = 1
  for (let i = buf.indexOf(10); i !== -1 && i < at; i = buf.indexOf(10, i + 1)) line++
  return line
}

/** A NUL byte means binary input in a record stream: NDJSON never holds one. */
function refuseNul(buf: Buffer, from: number, to: number, no: number, source: string): void {
  const at = buf.indexOf(0, from)
  if (at < 0 || at >= to) return
  let line = no
  for (let i = buf.indexOf(10, from); i >= 0 && i < at; i = buf.indexOf(10, i + 1)) line++
  throw errorAt(source, line, 'binary input (NUL byte); expected UTF-8 text')
}
