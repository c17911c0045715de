/**
 * The other n-gram dictionary formats `--dict` reads beside ours (docs/formats.md#n-gram-dictionary):
 * - the reference's JSON `{"ngram": count, …}` (BAORONGZHOU/span-fine-tuning @bca4358,
 *   dense_sent_tokenization.py MultiTokenizer.__init__ parses every line as JSON and keeps the
 *   last; here every non-blank line must be a JSON object of counts and the last one is kept);
 * - plain `ngram<TAB>count` lines with no header line.
 * N-grams are space-separated words; the reference looks up 2 to max_n = 5 words (its
 * MultiTokenizer default), so that is the max_n of these formats.
 */
import {errorAt} from '../stream/errors.js'
import {minOf} from '../util/arrays.js'

/** max_n of the reference's segmentation (MultiTokenizer's max_n default). */
export const REFERENCE_MAX_N = 5

export interface DictContent {
  maxN: number
  minCount: number
  keys: Set<string>
}

/** Collects one format's lines; `add` throws source:line errors. */
export interface DictLineReader {
  add(text: string, no: number): void
  result(): DictContent
}

function checkNgram(ngram: string, source: string, no: number): void {
  if (ngram.length === 0 || ngram.split(' ').includes(''))
    throw errorAt(source, no, `an n-gram must be words separated by single spaces, got ${JSON.stringify(ngram)}`)
}

/** The reference's JSON dictionary: each non-blank line a JSON object {ngram: count}; the last one counts. */
export class JsonDictReader implements DictLineReader {
  private last: Map<string, number> = new Map()

  constructor(readonly source: string) {}

  add(text: string, no: number): void {
    if (text.trim() === '') return
    let v: unknown
    try {
      v = JSON.parse(text)
    } catch (err) {
      throw errorAt(this.source, no, `not a JSON n-gram dictionary line: ${(err as Error).message}`)
    }
    if (v === null || typeof v !== 'object' || Array.isArray(v))
      throw errorAt(this.source, no, 'a JSON n-gram dictionary line must be an object {"ngram": count, …}')
    const m = new Map<string, number>()
    for (const [k, c] of Object.entries(v as Record<string, unknown>)) {
      if (typeof c !== 'number' || !Number.isFinite(c) || c < 0)
        throw errorAt(this.source, no, `count of ${JSON.stringify(k)} must be a number ≥ 0, got ${JSON.stringify(c)}`)
      checkNgram(k, this.source, no)
      m.set(k, c)
    }
    this.last = m
  }

  result(): DictContent {
    return {maxN: REFERENCE_MAX_N, minCount: minOf(this.last.values()) | 0, keys: new Set(this.last.keys())}
  }
}

/** `ngram<TAB>count` lines without a header (blank lines skipped). */
export class PlainDictReader implements DictLineReader {
  private readonly keys = new Set<string>()
  private min = Infinity

  constructor(readonly source: string) {}

  add(text: string, no: number): void {
    if (text.trim() === '') return
    const f = text.split('\t')
    if (f.length !== 2)
      throw errorAt(
        this.source,
        no,
        `expected "ngram<TAB>count" (or a "#span-ngrams v1" header, or a JSON object), got ${f.length} tab-separated field${f.length === 1 ? '' : 's'}`,
      )
    if (!/^\d+$/.test(f[1])) throw errorAt(this.source, no, `count must be an integer ≥ 0, got ${JSON.stringify(f[1])}`)
    checkNgram(f[0], this.source, no)
    this.keys.add(f[0])
    this.min = Math.min(this.min, Number(f[1]))
  }

  result(): DictContent {
    return {maxN: REFERENCE_MAX_N, minCount: Number.isFinite(this.min) ? this.min : 0, keys: this.keys}
  }
}

/** The reader for a file whose first line is `first` (ours is handled by the caller). */
export function dictReaderFor(first: string, source: string): DictLineReader {
  return first.trimStart().startsWith('{') ? new JsonDictReader(source) : new PlainDictReader(source)
}
