import {errorAt} from './errors.js'
import type {Source} from './lines.js'

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
export async function* readLineBatches(src: Source, maxLine = Infinity): AsyncGenerator<LineBatch> {
  let carry: Buffer[] = [] // an unfinished line from earlier chunks
  let carried = 0
  let no = 1
  const batch: LineBatch = {buf: Buffer.alloc(0), start: new Int32Array(1024), end: new Int32Array(1024), count: 0, firstNo: 1}
  for await (const chunk of src.stream as AsyncIterable<Buffer | string>) {
    const part = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    const last = part.lastIndexOf(10)
    if (last < 0) {
      checkNul(part, 0, part.length, no, src.name)
      carry.push(part)
      carried += part.length
      if (carried > maxLine) throw errorAt(src.name, no, `a line longer than ${maxLine / 2 ** 20} MB (--max-line-mb); not one record per line?`)
      continue
    }
    if (carried + last > maxLine) throw errorAt(src.name, no, `a line longer than ${maxLine / 2 ** 20} MB (--max-line-mb); not one record per line?`)
    const buf = carry.length > 0 ? Buffer.concat([...carry, part]) : part
    const limit = buf.length - (part.length - last - 1)
    carry = limit < buf.length ? [buf.subarray(limit)] : []
    carried = buf.length - limit
    frame(buf, limit, batch, no, src.name)
    no += batch.count
    yield batch
  }
  if (carry.length > 0) {
    frame(Buffer.concat(carry), -1, batch, no, src.name) // a last line without `\n` keeps a `\r`, as in split2
    yield batch
  }
}

/** Splits buf[0 .. limit) into the batch's lines: it ends with `\n`, or limit is -1 for the last line. */
function frame(buf: Buffer, limit: number, batch: LineBatch, no: number, source: string): void {
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
}

function grow(batch: LineBatch): void {
  const start = new Int32Array(2 * batch.start.length)
  start.set(batch.start)
  const end = new Int32Array(2 * batch.end.length)
  end.set(batch.end)
  batch.start = start
  batch.end = end
}

/** A NUL byte means binary input: text tools must not guess at it (as readLines). */
function checkNul(buf: Buffer, from: number, to: number, no: number, source: string): void {
  const at = buf.indexOf(0, from)
  if (at < 0 || at >= to) return
  let line = no
  for (let i = buf.indexOf(10, from); i >= 0 && i < at; i = buf.indexOf(10, i + 1)) line++
  throw errorAt(source, line, 'binary input (NUL byte); expected UTF-8 text')
}
