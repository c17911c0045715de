import {SpanError, errorAt} from '../stream/errors.js'
import type {Rng} from './rng.js'
import {readError} from '../util/fs-errors.js'
import {readTextWholeSync} from '../util/read-whole.js'

/** Tokens counted between two rebuilds of the sampling table (a deterministic schedule). */
export const REBUILD_EVERY = 1 << 16

/**
 * The unigram distribution of the data, from which span masking draws its random replacement
 * tokens (SpanBERT §3.1: "replaced with sampled tokens"; the reference `span_masking` samples
 * from the token counts of its dictionary). Special ids are never counted, so never drawn.
 *
 * Counts grow as blocks stream through (`add`); draws use a cumulative table that is rebuilt
 * once REBUILD_EVERY tokens have been counted since the last build, so the table lags the
 * counts by a bounded amount and the result depends only on the input order (reproducible).
 * Memory is one float per vocabulary entry, whatever the input size.
 */
export class Unigram {
  readonly counts: Float64Array
  private cdf: Float64Array
  private sinceBuild = 0
  private built = false
  private counted = 0

  constructor(private readonly special: Uint8Array, counts?: Float64Array) {
    this.counts = counts ?? new Float64Array(special.length)
    for (let id = 0; id < special.length; id++) if (special[id]) this.counts[id] = 0
    for (const c of this.counts) this.counted += c
    this.cdf = new Float64Array(special.length)
  }

  /** Total count of the non-special tokens seen. */
  get total(): number {
    return this.counted
  }

  /** Counts the non-special ids of a block. */
  add(ids: ArrayLike<number>): void {
    const counts = this.counts
    const special = this.special
    let added = 0
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]
      if (special[id] === 0) {
        counts[id]++
        added++
      }
    }
    this.counted += added
    this.sinceBuild += added
  }

  /** A non-special id drawn in proportion to its count. */
  sample(rng: Rng): number {
    if (!this.built || this.sinceBuild >= REBUILD_EVERY) this.rebuild()
    return rng.fromCdf(this.cdf)
  }

  private rebuild(): void {
    if (this.counted <= 0) throw new SpanError('no tokens counted for the unigram distribution')
    let acc = 0
    for (let id = 0; id < this.counts.length; id++) {
      acc += this.counts[id]
      this.cdf[id] = acc
    }
    this.built = true
    this.sinceBuild = 0
  }
}

/**
 * A counts file: line i holds the count of vocabulary id i (a non-negative integer), one line per
 * vocabulary entry, so `paste vocab.txt counts.txt` lines them up. `span mask --write-unigram`
 * writes one; counts of special ids are ignored.
 */
export function readUnigramFile(path: string, vocabSize: number): Float64Array {
  let text: string
  try {
    text = readTextWholeSync(path, 'unigram')
  } catch (err) {
    throw readError(err, path, 'unigram counts file not found')
  }
  const lines = text.split('\n')
  if (lines.at(-1) === '') lines.pop()
  if (lines.length !== vocabSize) {
    throw new SpanError(`${path}: ${lines.length} lines of counts, expected one per vocabulary entry (${vocabSize})`)
  }
  const counts = new Float64Array(vocabSize)
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim()
    if (!/^\d+$/.test(t)) throw errorAt(path, i + 1, `expected a non-negative integer count, got ${JSON.stringify(lines[i])}`)
    counts[i] = Number(t)
  }
  return counts
}

export function formatUnigramFile(counts: Float64Array): string {
  return Array.from(counts, (c) => String(c)).join('\n') + '\n'
}
