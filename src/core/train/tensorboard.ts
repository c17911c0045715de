import {existsSync} from 'node:fs'
import {open, rm, rmdir, type FileHandle} from 'node:fs/promises'
import {hostname} from 'node:os'
import {join} from 'node:path'
import {makeDirs} from '../util/dirs.js'
import {fsError, isErrno} from '../util/fs-errors.js'
import {ProtoWriter, RecordError, decodeFields, frameRecord, readRecords} from './tfrecord.js'
import {readWhole} from '../util/read-whole.js'
import {pushAll} from '../util/arrays.js'

/**
 * TensorBoard event files: TFRecords of `tensorflow.Event` protobufs
 * (tensorflow/core/util/event.proto: wall_time = 1 double, step = 2 int64, file_version = 3
 * string, summary = 5 Summary; tensorflow/core/framework/summary.proto: Summary.value = 1,
 * Summary.Value.tag = 1, simple_value = 2 float), pinned to tensorflow@v2.15.0. The first
 * event of a file carries only file_version "brain.Event:2", as TensorFlow's EventsWriter
 * (tensorflow/core/util/events_writer.cc, InitIfNeeded) writes it.
 */
export const FILE_VERSION = 'brain.Event:2'

/** Encodes one Event: a version event when `fileVersion` is set, else scalar summary values. */
export function encodeEvent(wallTime: number, step: number, body: {fileVersion?: string; scalars?: Array<[string, number]>}): Uint8Array {
  const ev = new ProtoWriter().double(1, wallTime).varint(2, step)
  if (body.fileVersion !== undefined) ev.bytes(3, body.fileVersion)
  if (body.scalars?.length) {
    const summary = new ProtoWriter()
    for (const [t, v] of body.scalars) summary.bytes(1, new ProtoWriter().bytes(1, t).float(2, v).finish())
    ev.bytes(5, summary.finish())
  }
  return ev.finish()
}

/**
 * Writes scalars to `DIR/events.out.tfevents.<seconds>.<hostname>` (a `.N` suffix when a file
 * of that name exists already, so two runs in one second never share a file). `scalar` only
 * queues a record; `flush` appends the queue, in order; `close` flushes and closes.
 */
export class EventWriter {
  private queue: Buffer[] = []
  private chain: Promise<void> = Promise.resolve()
  private closed = false

  private constructor(
    private readonly fh: FileHandle,
    readonly path: string,
  ) {}

  static async open(dir: string): Promise<EventWriter> {
    const made = !existsSync(dir)
    await makeDirs(dir).catch((err) => Promise.reject(fsError(err, isErrno(err) && (err as {path?: string}).path ? undefined : dir)))
    const now = Date.now() / 1000
    const base = join(dir, `events.out.tfevents.${Math.floor(now)}.${hostname()}`)
    for (let n = 0; ; n++) {
      const path = n === 0 ? base : `${base}.${n}`
      const fh = await open(path, 'wx').catch((err: {code?: string}) => {
        if (err.code === 'EEXIST') return null
        throw fsError(err, path)
      })
      if (fh === null) continue
      try {
        await fh.write(frameRecord(encodeEvent(now, 0, {fileVersion: FILE_VERSION})))
      } catch (err) {
        await fh.close()
        await rm(path, {force: true}) // a full disk: no empty event file left behind (nor the folder made for it)
        if (made) await rmdir(dir).catch(() => {})
        throw fsError(err, path)
      }
      return new EventWriter(fh, path)
    }
  }

  /** Queues one scalar at `step` (an integer) with the current wall time. */
  scalar(tag: string, value: number, step: number): void {
    if (this.closed) throw new Error(`EventWriter ${this.path}: scalar after close`)
    if (!Number.isSafeInteger(step)) throw new Error(`EventWriter: step must be an integer, got ${step}`)
    this.queue.push(frameRecord(encodeEvent(Date.now() / 1000, step, {scalars: [[tag, value]]})))
  }

  /** Appends what is queued to the file (readers see it at once), after any flush still running. */
  flush(): Promise<void> {
    const batch = Buffer.concat(this.queue)
    this.queue = []
    this.chain = this.chain.then(async () => {
      if (batch.length === 0) return
      await this.fh.write(batch).catch((err) => Promise.reject(fsError(err, this.path)))
    })
    return this.chain
  }

  async close(): Promise<void> {
    if (this.closed) return this.chain
    this.closed = true
    await this.flush()
    await this.fh.datasync().catch((err) => Promise.reject(fsError(err, this.path)))
    await this.fh.close()
  }
}

/** One decoded event: what span writes and reads back (other fields are skipped). */
export interface TbEvent {
  wallTime: number
  step: number
  fileVersion?: string
  scalars: Array<{tag: string; value: number}>
}

/** Decodes one Event protobuf (fields 1, 2, 3, 5; Summary.Value tag and simple_value). */
export function decodeEvent(data: Uint8Array): TbEvent {
  const ev: TbEvent = {wallTime: 0, step: 0, scalars: []}
  for (const f of decodeFields(data)) {
    if (f.field === 1 && f.bytes) ev.wallTime = Buffer.from(f.bytes).readDoubleLE(0)
    else if (f.field === 2 && f.int !== undefined) ev.step = Number(BigInt.asIntN(64, f.int))
    else if (f.field === 3 && f.bytes) ev.fileVersion = Buffer.from(f.bytes).toString('utf8')
    else if (f.field === 5 && f.bytes) pushAll(ev.scalars, decodeSummary(f.bytes))
  }
  return ev
}

function decodeSummary(data: Uint8Array): Array<{tag: string; value: number}> {
  const out: Array<{tag: string; value: number}> = []
  for (const v of decodeFields(data)) {
    if (v.field !== 1 || !v.bytes) continue
    let tag = ''
    let value: number | undefined
    for (const f of decodeFields(v.bytes)) {
      if (f.field === 1 && f.bytes) tag = Buffer.from(f.bytes).toString('utf8')
      else if (f.field === 2 && f.bytes) value = Buffer.from(f.bytes).readFloatLE(0)
    }
    if (value !== undefined) out.push({tag, value})
  }
  return out
}

/** Why an event file could not be read: `path: record N at byte B: reason`. */
export class EventFileError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(`${path}: ${detail}`)
    this.name = 'EventFileError'
  }
}

/** Every event of a file, each record's two masked CRC-32Cs checked as TensorBoard's reader does. */
export async function readEvents(path: string): Promise<TbEvent[]> {
  const buf = await readWhole(path, 'events')
  const out: TbEvent[] = []
  let n = 0
  try {
    for (const rec of readRecords(buf)) {
      n++
      out.push(decodeEvent(rec))
    }
  } catch (err) {
    const detail = err instanceof RecordError ? err.message : `record ${n}: bad Event protobuf (${(err as Error).message})`
    throw new EventFileError(path, detail)
  }
  return out
}
