/**
 * Sorted run files of `key\tcount` lines and their k-way merge: the external-memory half of the
 * n-gram dictionary build (see ngrams-count.ts for why counting is done this way).
 *
 * Entries travel in batches (arrays of up to BATCH entries): the merge itself is synchronous and
 * only awaits when a source's batch runs out, so millions of entries cost no per-entry promise.
 */
import {createReadStream, createWriteStream} from 'node:fs'
import {SpanError} from '../stream/errors.js'
import {LineWriter} from '../stream/writer.js'

/** An n-gram (words joined by single spaces) and its count. */
export type Entry = [string, number]
export type Batches = AsyncIterable<Entry[]>

/** A strict order on entries: true when a comes first. */
export type Before = (a: Entry, b: Entry) => boolean

/** By n-gram (UTF-16 code units, as String.prototype.sort): the order counts are merged in. */
export const byKey: Before = (a, b) => a[0] < b[0]

/** The dictionary's order: count descending, then n-gram ascending (deterministic ties). */
export const byCount: Before = (a, b) => a[1] > b[1] || (a[1] === b[1] && a[0] < b[0])

export const BATCH = 8192

/** `key\tcount` lines, one string per batch. */
export function formatBatch(batch: readonly Entry[]): string {
  let s = ''
  for (const [k, c] of batch) s += `${k}\t${c}\n`
  return s
}

/** Writes batches (already in order) to `path`. */
export async function writeRun(path: string, batches: Batches | Iterable<Entry[]>): Promise<void> {
  const out = createWriteStream(path)
  const w = new LineWriter(out)
  for await (const b of batches) if (b.length > 0) await w.raw(formatBatch(b))
  await w.end()
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())))
}

/**
 * The entries of a run file in batches, read in 16 KiB chunks (small batches die young in V8: FAN_IN sources hold ~5 MB).
 * Keys are decoded from the bytes one by one: a key split out of a chunk's string would be a
 * V8 sliced string pinning the whole chunk for as long as the entry lives.
 */
export async function* readRun(path: string): AsyncGenerator<Entry[]> {
  let rest: Buffer | null = null
  let no = 0
  for await (const chunk of createReadStream(path, {highWaterMark: 1 << 14})) {
    const buf: Buffer = rest ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer)
    const out: Entry[] = []
    let start = 0
    for (let nl = buf.indexOf(10, start); nl >= 0; nl = buf.indexOf(10, start)) {
      out.push(parseRunLine(buf, start, nl, path, ++no))
      start = nl + 1
    }
    rest = start < buf.length ? buf.subarray(start) : null
    if (out.length > 0) yield out
  }
  if (rest !== null) throw new SpanError(`${path}:${no + 1}: corrupt run file (no final newline)`)
}

/** `key\tcount` from buf[s, e). */
function parseRunLine(buf: Buffer, s: number, e: number, path: string, no: number): Entry {
  const tab = buf.lastIndexOf(9, e - 1)
  let count = 0
  for (let i = tab + 1; i < e; i++) {
    const d = buf[i] - 48
    if (d < 0 || d > 9) throw new SpanError(`${path}:${no}: corrupt run file`)
    count = count * 10 + d
  }
  if (tab < s || tab + 1 === e) throw new SpanError(`${path}:${no}: corrupt run file`)
  return [buf.toString('utf8', s, tab), count]
}

/** An array as batches. */
export async function* fromArray(entries: readonly Entry[]): AsyncGenerator<Entry[]> {
  for (let i = 0; i < entries.length; i += BATCH) yield entries.slice(i, i + BATCH)
}

interface Cursor {
  batch: Entry[]
  pos: number
  it: AsyncIterator<Entry[]>
}

/** Advances to the next non-empty batch; false at the end of the source. */
async function fill(c: Cursor): Promise<boolean> {
  while (c.pos >= c.batch.length) {
    const r = await c.it.next()
    if (r.done) return false
    c.batch = r.value
    c.pos = 0
  }
  return true
}

/** K-way merge of sorted sources through a binary heap of their cursors. */
export async function* mergeSorted(sources: Batches[], before: Before): AsyncGenerator<Entry[]> {
  const first = (x: Cursor, y: Cursor) => before(x.batch[x.pos], y.batch[y.pos])
  const heap: Cursor[] = []
  for (const s of sources) {
    const c: Cursor = {batch: [], pos: 0, it: s[Symbol.asyncIterator]()}
    if (await fill(c)) heapPush(heap, c, first)
  }
  let out: Entry[] = []
  while (heap.length > 0) {
    const top = heap[0]
    out.push(top.batch[top.pos++])
    if (top.pos >= top.batch.length && !(await fill(top))) {
      const last = heap.pop() as Cursor
      if (heap.length > 0) heap[0] = last
    }
    if (heap.length > 0) heapDown(heap, 0, first)
    if (out.length >= BATCH) {
      yield out
      out = []
    }
  }
  if (out.length > 0) yield out
}

/** Sums the counts of equal adjacent keys (a merge by key yields equal keys together). */
export async function* sumEqual(sorted: Batches): AsyncGenerator<Entry[]> {
  let cur: Entry | null = null
  for await (const batch of sorted) {
    const out: Entry[] = []
    for (const [k, c] of batch) {
      if (cur !== null && cur[0] === k) cur[1] += c
      else {
        if (cur !== null) out.push(cur)
        cur = [k, c]
      }
    }
    if (out.length > 0) yield out
  }
  if (cur !== null) yield [cur]
}

/** Binary heap helpers: `first(a, b)` is the heap's order (the root comes first). */
export function heapPush<T>(heap: T[], x: T, first: (a: T, b: T) => boolean): void {
  heap.push(x)
  for (let i = heap.length - 1; i > 0; ) {
    const p = (i - 1) >> 1
    if (!first(heap[i], heap[p])) break
    ;[heap[i], heap[p]] = [heap[p], heap[i]]
    i = p
  }
}

export function heapDown<T>(heap: T[], i: number, first: (a: T, b: T) => boolean): void {
  for (;;) {
    const l = 2 * i + 1
    let m = i
    if (l < heap.length && first(heap[l], heap[m])) m = l
    if (l + 1 < heap.length && first(heap[l + 1], heap[m])) m = l + 1
    if (m === i) return
    ;[heap[i], heap[m]] = [heap[m], heap[i]]
    i = m
  }
}
