import type {TokenRecord} from './records.js'
import type {Rng} from './rng.js'

/** A two-segment block for the NSP baseline (docs/formats.md#pair-blocks). */
export interface PairBlock {
  doc: number
  ids: number[] // [CLS] A… [SEP] B… [SEP]
  segments: number[] // 0 for [CLS] A [SEP], 1 for B [SEP]
  next: boolean // B is the text that follows A in the same document
}

/**
 * Tokens of the recently seen documents that random second segments are drawn from. BERT's
 * create_pretraining_data holds the whole corpus and draws from any other document; a stream
 * cannot, so we keep the most recent documents up to `cap` tokens (whole documents are evicted
 * oldest first; a document longer than `cap` keeps only its first lines). With the default of
 * 1M tokens that is hundreds of Wikipedia-sized documents, so negatives are as varied as
 * BERT's, at a bounded ~10 MB.
 */
export class RecentDocs {
  private docs: Array<{doc: number; lines: number[][]; tokens: number}> = []
  private total = 0

  constructor(private readonly cap: number) {}

  add(doc: number, line: number[]): void {
    let last = this.docs.at(-1)
    if (!last || last.doc !== doc) {
      last = {doc, lines: [], tokens: 0}
      this.docs.push(last)
    }
    if (last.lines.length > 0 && last.tokens + line.length > this.cap) return
    last.lines.push(line)
    last.tokens += line.length
    this.total += line.length
    while (this.total > this.cap && this.docs.length > 1) this.total -= this.docs.shift()!.tokens
  }

  /** The stored lines of a document other than `doc`, chosen uniformly; null when there is none. */
  pickOther(doc: number, rng: Rng): number[][] | null {
    const others = this.docs.filter((d) => d.doc !== doc)
    return others.length === 0 ? null : others[rng.int(others.length)].lines
  }

  /** The stored lines of `doc`, the current document (the last one added). */
  current(doc: number): number[][] {
    const last = this.docs.at(-1)
    return last && last.doc === doc ? last.lines : []
  }
}

export const PAIR_POOL_TOKENS = 1_000_000

/**
 * Sentence pairs for next-sentence prediction, following BERT's `create_instances_from_document`
 * (create_pretraining_data.py; BERT appendix A.2) one line at a time: lines of a document gather
 * in a chunk until it reaches len−3 tokens (or the document ends); A is the chunk's first
 * 1..k−1 lines (a random split); half the time B is a random stretch of another document and
 * the chunk's unused lines go back to start the next chunk, otherwise B is the rest of the chunk
 * (see `emit` for one-line chunks). `truncatePair` then fits both into len−3.
 * No short sequences (BERT's short_seq_prob): every pair targets the full length.
 */
export class PairMaker {
  private doc: number | null = null
  private chunk: number[][] = []
  private chunkLen = 0
  private consumed = 0 // lines of the current document used in pairs so far
  private wantNext: boolean | null = null // the chunk's draw: B continues A
  private readonly pool: RecentDocs
  private readonly target: number

  constructor(len: number, private readonly cls: number, private readonly sep: number, private readonly rng: Rng, poolTokens = PAIR_POOL_TOKENS) {
    if (len < 5) throw new RangeError(`pair blocks need --len ≥ 5, got ${len}`)
    this.target = len - 3
    this.pool = new RecentDocs(poolTokens)
  }

  /** Adds a line; returns the pairs it completed. */
  push(rec: TokenRecord): PairBlock[] {
    const out: PairBlock[] = []
    if (rec.doc !== this.doc) {
      this.endDoc(out)
      this.doc = rec.doc
      this.consumed = 0
    }
    if (rec.ids.length === 0) return out
    this.pool.add(rec.doc, rec.ids)
    this.feed(rec.ids, out)
    return out
  }

  finish(): PairBlock[] {
    const out: PairBlock[] = []
    this.endDoc(out)
    return out
  }

  private feed(line: number[], out: PairBlock[]): void {
    this.chunk.push(line)
    this.chunkLen += line.length
    if (this.chunkLen >= this.target) this.emit(out, false)
  }

  private endDoc(out: PairBlock[]): void {
    while (this.chunk.length > 0) this.emit(out, true)
  }

  /**
   * One pair from the chunk (BERT: `a_end`, `is_random_next`, "put unused segments back").
   * BERT forces a random B on a one-line chunk; where lines are paragraphs that is most chunks,
   * and far fewer than half the pairs would be true continuations. So a one-line chunk draws
   * too, and to continue it waits for the next line (only a document's last line is forced).
   */
  private emit(out: PairBlock[], atEnd: boolean): void {
    const chunk = this.chunk
    this.wantNext ??= this.rng.float() >= 0.5
    if (chunk.length === 1 && this.wantNext && !atEnd) return
    const isRandom = chunk.length === 1 || !this.wantNext
    this.wantNext = null
    this.chunk = []
    this.chunkLen = 0
    const aEnd = chunk.length >= 2 ? 1 + this.rng.int(chunk.length - 1) : 1
    const a = chunk.slice(0, aEnd).flat()
    this.consumed += aEnd
    const rest = chunk.slice(aEnd)
    const b = isRandom ? this.randomB(this.target - a.length) : rest.flat()
    if (!isRandom) this.consumed += rest.length
    out.push(this.build(a, b, !isRandom))
    if (isRandom) for (const line of rest) this.feed(line, out)
  }

  /**
   * A random B of about `want` tokens: whole lines of a recent other document from a random
   * line on (BERT's `random_start`). While the stream's first document is the only one seen,
   * the lines come from the current document at or before A (never its continuation), as BERT
   * falls back to the same document when the corpus has no other.
   */
  private randomB(want: number): number[] {
    const doc = this.doc ?? 0
    const lines = this.pool.pickOther(doc, this.rng) ?? this.pool.current(doc).slice(0, this.consumed)
    const b: number[] = []
    for (let j = this.rng.int(lines.length); j < lines.length; j++) {
      for (const id of lines[j]) b.push(id)
      if (b.length >= want) break
    }
    return b
  }

  private build(a: number[], b: number[], next: boolean): PairBlock {
    const [a0, a1, b0, b1] = truncatePair(a.length, b.length, this.target, this.rng)
    const ids = [this.cls, ...a.slice(a0, a1), this.sep, ...b.slice(b0, b1), this.sep]
    const segments = new Array<number>(ids.length).fill(0, 0, a1 - a0 + 2).fill(1, a1 - a0 + 2)
    return {doc: this.doc ?? 0, ids, segments, next}
  }
}

/**
 * BERT's `truncate_seq_pair`: while the pair is longer than `max`, drop a token from the longer
 * side (B on a tie), from its front or its back at random. Returns the kept ranges
 * [aStart, aEnd, bStart, bEnd) (ends exclusive).
 */
export function truncatePair(aLen: number, bLen: number, max: number, rng: Rng): [number, number, number, number] {
  let [a0, a1, b0, b1] = [0, aLen, 0, bLen]
  while (a1 - a0 + (b1 - b0) > max) {
    const front = rng.float() < 0.5
    if (a1 - a0 > b1 - b0) {
      if (front) a0++
      else a1--
    } else if (front) b0++
    else b1--
  }
  return [a0, a1, b0, b1]
}
