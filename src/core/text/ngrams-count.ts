/**
 * Counting n-grams (Span Fine-tuning §3.1, §4.1: 2 ≤ n ≤ 5, kept when seen at least 10 times)
 * in memory bounded by --memory, however large the corpus.
 *
 * Scheme: sort-based external counting. A hash map counts until its estimated size passes the
 * budget, then its keys are sorted and written as a run file (`ngram\tcount`, key order) and
 * the map is emptied. At the end the runs (and the map's remainder) are merged k-way, equal
 * keys summed, and the totals filtered by min-count. Why this and not the alternatives:
 * - min-count needs exact totals, so counts cannot be dropped early (lossy counting or a
 *   count-min sketch would keep or drop the wrong n-grams near the threshold);
 * - hashing n-grams into P partition files needs P chosen in advance and each partition's
 *   distinct n-grams to fit in memory, which is unknown for a stream; sorted runs need neither,
 *   and the merge reads each run sequentially with one small buffer per run;
 * - Zipfian text repeats its frequent n-grams in every run, but the rare ones dominate the
 *   distinct count anyway, so runs cost about what partitions would.
 * Ordering the kept n-grams by count is a second bounded pass: a size-K heap with --max-size,
 * otherwise the same spill-and-merge with the (count desc, n-gram asc) order.
 * Memory: --memory bounds the live map (by an estimate per entry); on top come the runtime
 * (~90 MB with the character tables), the merge's small read buffers (FAN_IN × 16 KiB) and V8's
 * garbage between collections, which collect() keeps down; none of it grows with the corpus.
 */
import {mkdtemp, rm} from 'node:fs/promises'
import {join} from 'node:path'
import {setFlagsFromString} from 'node:v8'
import {runInNewContext} from 'node:vm'
import {BATCH, byCount, byKey, fromArray, heapDown, heapPush, mergeSorted, readRun, sumEqual, writeRun, type Batches, type Before, type Entry} from './ngrams-runs.js'

export interface CountOptions {
  maxN: number
  minCount: number
  maxSize: number | null // keep the K most frequent
  memoryBytes: number // budget of the in-memory map (and of the ordering pass)
  tmpDir: string // where run files go (a fresh subdirectory, removed at the end)
}

/** Estimated bytes per map entry: key (2 bytes a code unit, worst case) plus V8 string and hash-table overhead. */
const entryBytes = (key: string) => 2 * key.length + 96

/** More runs than this are merged in groups first, so open files and read buffers stay bounded. */
export const FAN_IN = 64

let gcFn: (() => void) | null | undefined

/**
 * A full garbage collection after a spill. V8 sizes its old generation by allocation rate, not
 * by what is live, so an emptied map stays in the heap as garbage and the process grows to many
 * times --memory (measured: 500 MB peak RSS at --memory 4). Node exposes gc() only behind
 * --expose-gc; the flag can be set at run time and the function taken from a fresh context.
 */
function collect(): void {
  if (gcFn === undefined) {
    try {
      setFlagsFromString('--expose-gc')
      gcFn = runInNewContext('gc') as () => void
    } catch {
      gcFn = null
    }
  }
  gcFn?.()
}

/** Temporary run files in a directory of their own. */
class RunDir {
  private dir: string | null = null
  private n = 0
  constructor(private readonly parent: string) {}

  async next(): Promise<string> {
    this.dir ??= await mkdtemp(join(this.parent, 'span-ngrams-'))
    return join(this.dir, `run-${this.n++}.tsv`)
  }

  async remove(): Promise<void> {
    if (this.dir) await rm(this.dir, {recursive: true, force: true})
  }
}

export class NgramCounter {
  private counts = new Map<string, number>()
  private bytes = 0
  private runs: string[] = []
  private readonly dir: RunDir
  sentences = 0
  occurrences = 0 // n-gram tokens counted
  spills = 0 // runs written while counting
  orderSpills = 0 // runs written while ordering by count

  constructor(readonly opts: CountOptions) {
    this.dir = new RunDir(opts.tmpDir)
  }

  /** Counts the n-grams of one sentence; `punct[i]` marks punctuation-only words, which no n-gram may contain. */
  add(words: readonly string[], punct: readonly boolean[]): void {
    this.sentences++
    const maxN = this.opts.maxN
    for (let i = 0; i < words.length; i++) {
      if (punct[i]) continue
      let key = words[i]
      for (let j = i + 1; j < words.length && j - i < maxN && !punct[j]; j++) {
        key = `${key} ${words[j]}`
        const c = this.counts.get(key)
        if (c === undefined) {
          this.counts.set(key, 1)
          this.bytes += entryBytes(key)
        } else this.counts.set(key, c + 1)
        this.occurrences++
      }
    }
  }

  /** Writes the map as a sorted run when it has outgrown the budget. */
  async maybeSpill(): Promise<void> {
    if (this.bytes < this.opts.memoryBytes) return
    const keys = Array.from(this.counts.keys()).sort()
    const path = await this.dir.next()
    await writeRun(path, keyBatches(keys, this.counts))
    this.runs.push(path)
    this.counts.clear()
    this.bytes = 0
    this.spills++
    collect()
  }

  /**
   * Totals of the n-grams kept (count ≥ min-count), in batches: in key order after spills; in
   * no particular order when everything fitted in memory (the caller orders by count anyway).
   */
  async *totals(): AsyncGenerator<Entry[]> {
    const min = this.opts.minCount
    if (this.runs.length === 0) {
      yield* fromArray(Array.from(this.counts).filter((e) => e[1] >= min))
      this.counts.clear()
      return
    }
    await this.fanIn(this.runs, byKey)
    const rest = Array.from(this.counts).sort(compareKeys)
    this.counts.clear()
    const sources = [...this.runs.map((r) => readRun(r)), fromArray(rest)]
    for await (const batch of sumEqual(mergeSorted(sources, byKey))) yield batch.filter((e) => e[1] >= min)
  }

  /** Merges groups of FAN_IN runs into one until at most FAN_IN are left (counts summed when merging by key). */
  private async fanIn(runs: string[], before: Before): Promise<void> {
    while (runs.length > FAN_IN) {
      const group = runs.splice(0, FAN_IN)
      const path = await this.dir.next()
      const merged = mergeSorted(group.map((r) => readRun(r)), before)
      await writeRun(path, before === byKey ? sumEqual(merged) : merged)
      runs.push(path)
      await Promise.all(group.map((r) => rm(r, {force: true})))
      collect()
    }
  }

  /** The kept n-grams in dictionary order (count desc, n-gram asc), at most max-size of them, and how many. */
  async ordered(): Promise<{size: number; entries: Batches}> {
    if (this.opts.maxSize !== null) {
      const top = await topK(this.totals(), this.opts.maxSize)
      return {size: top.length, entries: fromArray(top)}
    }
    let size = 0
    const runs: string[] = []
    let buf: Entry[] = []
    let bytes = 0
    let batches = 0
    for await (const batch of this.totals()) {
      if (++batches % 128 === 0) collect() // merged batches are promoted garbage (see collect)
      for (const e of batch) {
        buf.push(e)
        size++
        bytes += entryBytes(e[0])
        if (bytes < this.opts.memoryBytes) continue
        runs.push(await this.dir.next())
        await writeRun(runs[runs.length - 1], fromArray(buf.sort(compareByCount)))
        ;[buf, bytes] = [[], 0]
        this.orderSpills++
        collect()
      }
    }
    buf.sort(compareByCount)
    if (runs.length === 0) return {size, entries: fromArray(buf)}
    await this.fanIn(runs, byCount)
    return {size, entries: mergeSorted([...runs.map((r) => readRun(r)), fromArray(buf)], byCount)}
  }

  async cleanup(): Promise<void> {
    this.counts.clear()
    await this.dir.remove()
  }
}

/** A map's entries in the order of `keys`, in batches. */
function* keyBatches(keys: string[], counts: Map<string, number>): Generator<Entry[]> {
  for (let i = 0; i < keys.length; i += BATCH) yield keys.slice(i, i + BATCH).map((k) => [k, counts.get(k) as number] as Entry)
}

function compareKeys(a: Entry, b: Entry): number {
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0
}

function compareByCount(a: Entry, b: Entry): number {
  return byCount(a, b) ? -1 : byCount(b, a) ? 1 : 0
}

/**
 * The k entries first in dictionary order, with a size-k heap whose root is the last of them
 * (memory O(k) however many n-grams pass min-count); returned sorted.
 */
export async function topK(batches: Batches, k: number): Promise<Entry[]> {
  const heap: Entry[] = [] // root = the entry that comes last in byCount order
  const after: Before = (a, b) => byCount(b, a)
  for await (const batch of batches) {
    for (const e of batch) {
      if (heap.length < k) heapPush(heap, e, after)
      else if (k > 0 && byCount(e, heap[0])) {
        heap[0] = e
        heapDown(heap, 0, after)
      }
    }
  }
  return heap.sort(compareByCount)
}
