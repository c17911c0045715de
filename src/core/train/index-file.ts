import {createHash} from 'node:crypto'
import {closeSync, createReadStream, createWriteStream, openSync, readSync} from 'node:fs'
import {mkdtemp, rm} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pipeline} from 'node:stream/promises'
import {SpanError, errorAt} from '../stream/errors.js'
import {maxLineBytes} from '../stream/bytelines.js'
import type {Rec} from '../stream/ndjson.js'
import {shownPath} from '../util/dirs.js'

/** What the indexing pass found out about a file (saved with checkpoints to check a resume). */
export interface FileFingerprint {
  bytes: number
  records: number
  sha256: string
}

/**
 * Byte offsets of every record line of an NDJSON file, built in one streaming pass, so records
 * can be read back in any order by positioned reads: a data set larger than memory trains with
 * 16 bytes per example held (docs/algorithms.md#determinism).
 * The header line (if any) is not a record; blank lines are skipped.
 */
export class RecordIndex {
  private starts = new Float64Array(1024)
  private lengths = new Uint32Array(1024)
  private lines = new Float64Array(1024)
  private n = 0
  private fd = -1
  private buf = Buffer.alloc(1 << 16)
  header: Rec | null = null
  fingerprint: FileFingerprint = {bytes: 0, records: 0, sha256: ''}

  private constructor(readonly path: string, readonly name: string, private readonly temp: string | null) {}

  get size(): number {
    return this.n
  }

  /**
   * Indexes `path` (`-`: stdin, first copied to a temporary file). `onRecord` sees every record
   * as it passes (to validate it and count tokens); `onHeader` the first line when it is a header.
   */
  static async build(path: string, onRecord: (rec: Rec, i: number) => void, onHeader: (rec: Rec) => void): Promise<RecordIndex> {
    const stdin = path === '-' || path === ''
    const temp = stdin ? await mkdtemp(join(tmpdir(), 'span-pretrain-')) : null
    const file = temp ? join(temp, 'stdin.ndjson') : path
    if (temp) await pipeline(process.stdin, createWriteStream(file))
    const index = new RecordIndex(file, stdin ? 'stdin' : shownPath(path), temp) // errors name the file as typed
    await index.scan(onRecord, onHeader)
    index.fd = openSync(file, 'r')
    return index
  }

  /** Reads record i back: its JSON value and its line number in the source. */
  read(i: number): Rec {
    if (i < 0 || i >= this.n) throw new RangeError(`record ${i} of ${this.n}`)
    const len = this.lengths[i]
    if (this.buf.length < len) this.buf = Buffer.alloc(2 * len)
    const got = readSync(this.fd, this.buf, 0, len, this.starts[i])
    const line = this.lines[i]
    if (got !== len) throw errorAt(this.name, line, 'the file changed while training (short read)')
    try {
      return {value: JSON.parse(this.buf.toString('utf8', 0, len)) as Record<string, unknown>, line}
    } catch {
      throw errorAt(this.name, line, 'the file changed while training (record no longer valid JSON)')
    }
  }

  async close(): Promise<void> {
    if (this.fd >= 0) closeSync(this.fd)
    this.fd = -1
    if (this.temp) await rm(this.temp, {recursive: true, force: true})
  }

  /** The streaming pass: frames lines on `\n` (a `\r` before it is dropped), tracking byte offsets. */
  private async scan(onRecord: (rec: Rec, i: number) => void, onHeader: (rec: Rec) => void): Promise<void> {
    const hash = createHash('sha256')
    let offset = 0 // file offset of chunk[0]
    let carry: Buffer[] = []
    let carryStart = 0
    let lineNo = 0
    const emit = (bytes: Buffer, start: number) => {
      lineNo++
      let end = bytes.length
      if (end > 0 && bytes[end - 1] === 13) end--
      this.line(bytes.subarray(0, end), start, lineNo, onRecord, onHeader)
    }
    for await (const chunk of createReadStream(this.path, {highWaterMark: 1 << 20}) as AsyncIterable<Buffer>) {
      hash.update(chunk)
      let s = 0
      for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, s)) {
        if (carry.length > 0) emit(Buffer.concat([...carry, chunk.subarray(0, nl)]), carryStart)
        else emit(chunk.subarray(s, nl), offset + s)
        carry = []
        s = nl + 1
      }
      if (s < chunk.length) {
        if (carry.length === 0) carryStart = offset + s
        carry.push(chunk.subarray(s))
        if (offset + chunk.length - carryStart > maxLineBytes()) throw errorAt(this.name, lineNo + 1, `a line longer than ${maxLineBytes() / 2 ** 20} MB (--max-line-mb); not one record per line?`)
      }
      offset += chunk.length
    }
    if (carry.length > 0) emit(Buffer.concat(carry), carryStart)
    this.fingerprint = {bytes: offset, records: this.n, sha256: hash.digest('hex')}
  }

  private line(bytes: Buffer, start: number, no: number, onRecord: (rec: Rec, i: number) => void, onHeader: (rec: Rec) => void): void {
    if (bytes.length === 0 || bytes.toString('latin1').trim() === '') return
    if (bytes.includes(0)) throw errorAt(this.name, no, 'binary input (NUL byte); expected UTF-8 text')
    let value: unknown
    try {
      value = JSON.parse(bytes.toString('utf8'))
    } catch (err) {
      throw errorAt(this.name, no, `invalid JSON: ${(err as Error).message}`)
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw errorAt(this.name, no, 'expected a JSON object')
    const rec = {value: value as Record<string, unknown>, line: no}
    if (this.n === 0 && this.header === null && rec.value.span === 'header') {
      this.header = rec
      onHeader(rec)
      return
    }
    onRecord(rec, this.n)
    this.push(start, bytes.length, no)
  }

  private push(start: number, length: number, line: number): void {
    if (this.n === this.starts.length) this.grow()
    this.starts[this.n] = start
    this.lengths[this.n] = length
    this.lines[this.n++] = line
  }

  private grow(): void {
    const cap = 2 * this.starts.length
    const s = new Float64Array(cap)
    s.set(this.starts)
    const l = new Uint32Array(cap)
    l.set(this.lengths)
    const n = new Float64Array(cap)
    n.set(this.lines)
    this.starts = s
    this.lengths = l
    this.lines = n
  }
}

/** Checks that a resumed run reads the data it was trained on. */
export function checkFingerprint(name: string, saved: FileFingerprint | undefined, now: FileFingerprint): void {
  if (!saved) return
  if (saved.sha256 !== now.sha256 || saved.records !== now.records) {
    throw new SpanError(
      `${name}: not the data the checkpoint was trained on (${now.records} records, sha256 ${now.sha256.slice(0, 12)}…; ` +
        `the checkpoint saw ${saved.records} records, sha256 ${saved.sha256.slice(0, 12)}…)`,
    )
  }
}
