import {UsageError, errorAt} from '../stream/errors.js'
import type {LineBatch} from '../stream/bytelines.js'
import type {Rec} from '../stream/ndjson.js'
import type {LineWriter} from '../stream/writer.js'
import {IdSpool} from './long-line.js'
import {CHUNK, TokenRecordWriter} from './token-records.js'
import type {WordPieceTokenizer} from './tokenizer.js'
import {setFlagsFromString} from 'node:v8'

/**
 * Document numbers for raw text (docs/algorithms.md#documents): starting at 0, the counter goes up once per
 * run of blank lines between non-blank ones. With a doc-start pattern, a line matching it starts
 * a new document instead, and blank lines no longer separate documents.
 */
export class DocCounter {
  private doc = 0
  private emitted = false // some line already went into the current document
  private pending = false // the next non-blank line starts a new document

  constructor(private readonly docStart: RegExp | null) {}

  /** Whether lines must be decoded for the doc-start pattern. */
  get needsText(): boolean {
    return this.docStart !== null
  }

  /** The document of a line, or -1 for a blank line (which gets no record); `text` only matters with a pattern. */
  next(text: string | null, blank: boolean): number {
    if (this.docStart ? this.docStart.test(text ?? '') : blank) this.pending = this.emitted
    if (blank) return -1
    if (this.pending) {
      this.doc++
      this.pending = false
    }
    this.emitted = true
    return this.doc
  }
}

/**
 * `--doc-start` as a RegExp run by V8's linear-time engine (the `l` flag: no backtracking, so a
 * pattern such as `^(a+)+$` costs time linear in the line instead of exponential; issue 25,
 * cause 6), or a one-line error. That engine has no backreferences or lookarounds: a pattern
 * that needs them is refused by name rather than run with backtracking.
 */
export function docStartPattern(source: string | undefined): RegExp | null {
  if (source === undefined) return null
  try {
    new RegExp(source) // its syntax, with the message the usual engine gives
  } catch (err) {
    throw new UsageError(`--doc-start: ${(err as Error).message}`)
  }
  try {
    return new RegExp(source, linearFlag())
  } catch {
    throw new UsageError(`--doc-start: ${JSON.stringify(source)} needs backtracking (a backreference or lookaround), which could take exponential time on a line; write it without`)
  }
}

/** The `l` flag, once V8's linear-time engine is enabled (a V8 flag, set before the first such RegExp). */
function linearFlag(): string {
  if (!linearEnabled) setFlagsFromString('--enable-experimental-regexp-engine')
  linearEnabled = true
  return 'l'
}
let linearEnabled = false

export interface TokenizeOptions {
  tokens: boolean // add "tokens":[...] to each record
  shard?: Shard | null // keep only this shard's documents
}

/** `--shard K/N`: documents K, K+N, K+2N, … (numbers as the unsharded run gives them). */
export interface Shard {
  k: number
  n: number
}

export function parseShard(s: string | undefined): Shard | null {
  if (s === undefined) return null
  const m = /^(\d+)\/(\d+)$/.exec(s.trim())
  if (!m || Number(m[2]) < 1 || Number(m[1]) >= Number(m[2])) throw new UsageError(`--shard ${s}: expected K/N with 0 ≤ K < N, e.g. 0/4`)
  return {k: Number(m[1]), n: Number(m[2])}
}

/** A long line being tokenized in pieces: its document (-1 while every piece so far was blank). */
interface LongLine {
  doc: number
  keep: boolean // this shard's
  head: string | null // the first piece, for --doc-start
  spool: IdSpool | null // its ids, for --tokens
}

/** A sink for token records, flushed to the LineWriter in chunks (backpressure per chunk). */
class Sink {
  private readonly rw: TokenRecordWriter
  private readonly shard: Shard
  private long: LongLine | null = null // a long line coming in pieces

  constructor(private readonly tok: WordPieceTokenizer, private readonly w: LineWriter, opts: TokenizeOptions) {
    this.rw = new TokenRecordWriter(tok.vocab.tokens.length, opts.tokens ? tok.vocab.tokens : null)
    this.shard = opts.shard ?? {k: 0, n: 1}
  }

  /** Whether a document is this shard's. */
  keeps(doc: number): boolean {
    return doc % this.shard.n === this.shard.k
  }

  async line(doc: number, text: string): Promise<void> {
    if (!this.keeps(doc)) return
    const n = this.tok.encodeInto(text)
    this.rw.add(doc, this.tok.ids(), n)
    if (this.rw.pending >= CHUNK) await this.w.raw(this.rw.take())
  }

  /** The lines of one batch, tokenized from their bytes (decoded only when malformed, blank or --doc-start needs it). */
  async batch(b: LineBatch, docs: DocCounter): Promise<void> {
    const tok = this.tok
    let from = 0
    if (b.piece || this.long) {
      await this.piece(b.buf, b.start[0], b.end[0], docs, !b.piece) // a long line's last piece is line 0 of the next batch
      if (b.piece) return
      from = 1
    }
    for (let i = from; i < b.count; i++) {
      const s = b.start[i]
      const e = b.end[i]
      let n = tok.encodeBytes(b.buf, s, e)
      let text: string | null = null
      if (n < 0) {
        text = b.buf.toString('utf8', s, e)
        n = tok.encodeInto(text)
      }
      if (n === 0 || docs.needsText) text ??= b.buf.toString('utf8', s, e)
      const blank = n === 0 && tok.isBlank(text as string)
      const doc = docs.next(text, blank)
      if (doc >= 0 && this.keeps(doc)) this.rw.add(doc, tok.ids(), n)
    }
    if (this.rw.pending >= CHUNK) await this.w.raw(this.rw.take())
  }

  /**
   * One piece of a long line (docs/formats.md#long-lines): its ids are appended to the line's
   * record, which is opened at the first piece that is not blank (the document is known then).
   * `--doc-start` sees the line's first piece.
   */
  private async piece(buf: Buffer, s: number, e: number, docs: DocCounter, last: boolean): Promise<void> {
    const tok = this.tok
    let n = tok.encodeBytes(buf, s, e)
    let text: string | null = null
    if (n < 0) n = tok.encodeInto((text = buf.toString('utf8', s, e)))
    const long = (this.long ??= {doc: -1, keep: false, head: docs.needsText ? (text ??= buf.toString('utf8', s, e)) : null, spool: null})
    if (long.doc < 0 && (n > 0 || !tok.isBlank((text ??= buf.toString('utf8', s, e))))) this.openLong(long, docs)
    if (long.keep) {
      this.rw.more(tok.ids(), n)
      long.spool?.write(tok.ids(), n)
    }
    if (this.rw.pending >= CHUNK) await this.w.raw(this.rw.take())
    if (!last) return
    if (long.doc < 0) docs.next(long.head, true)
    else if (long.keep) await this.closeLong(long)
    this.long = null
  }

  private openLong(long: LongLine, docs: DocCounter): void {
    long.doc = docs.next(long.head, false)
    long.keep = this.keeps(long.doc)
    if (!long.keep) return
    this.rw.open(long.doc)
    if (this.rw.withTokens) long.spool = new IdSpool()
  }

  /** `"tokens"` from the spooled ids when asked for, then the record's end. */
  private async closeLong(long: LongLine): Promise<void> {
    if (long.spool) {
      this.rw.tokensOpen()
      try {
        for (const [ids, n] of long.spool.chunks()) {
          this.rw.tokenStrings(ids, n)
          if (this.rw.pending >= CHUNK) await this.w.raw(this.rw.take())
        }
      } finally {
        long.spool.close()
      }
    }
    this.rw.close()
  }

  async end(): Promise<void> {
    if (this.rw.pending > 0) await this.w.raw(this.rw.take())
  }
}

/** Raw text: one token record per non-blank line. */
export async function tokenizeText(batches: AsyncIterable<LineBatch>, tok: WordPieceTokenizer, w: LineWriter, opts: TokenizeOptions & {docStart: RegExp | null}): Promise<void> {
  const docs = new DocCounter(opts.docStart)
  const sink = new Sink(tok, w, opts)
  for await (const b of batches) await sink.batch(b, docs)
  await sink.end()
}

/**
 * JSONL: record k (0-based) is document k; its `field` text is split into lines, one token
 * record per non-blank line.
 */
export async function tokenizeJsonl(recs: AsyncIterable<Rec>, source: string, field: string, tok: WordPieceTokenizer, w: LineWriter, opts: TokenizeOptions): Promise<void> {
  const sink = new Sink(tok, w, opts)
  let doc = 0
  for await (const rec of recs) {
    for (const text of fieldText(rec, field, source).split(/\r?\n/)) {
      if (!tok.isBlank(text)) await sink.line(doc, text)
    }
    doc++
  }
  await sink.end()
}

function fieldText(rec: Rec, field: string, source: string): string {
  if (!Object.hasOwn(rec.value, field)) throw errorAt(source, rec.line, `missing field "${field}"`)
  const v = rec.value[field]
  if (typeof v === 'string') return v
  const type = v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`
  throw errorAt(source, rec.line, `field "${field}" must be a string, got ${type}`)
}
