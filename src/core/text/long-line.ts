import {closeSync, openSync, readSync, unlinkSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {type BinaryMode, type LongLines, readLineBatches} from '../stream/bytelines.js'
import type {Source} from '../stream/lines.js'
import {utf8Decode, utf8Length} from './basic.js'
import {Kind, type CharTable} from './chars.js'

/**
 * Raw-text lines of any length in bounded memory (`span tokenize`, docs/formats.md#long-lines):
 * a line is read in pieces of about PIECE_BYTES, each cut where BERT's BasicTokenizer cannot join
 * across the cut, so that the pieces tokenized one by one give the ids of the whole line.
 */
export const PIECE_BYTES = 1 << 18

/** Cuts by the tokenizer's character table (see safeCut). */
export function longLines(table: CharTable, bytes = PIECE_BYTES): LongLines {
  return {bytes, cut: (buf, e) => safeCut(table, buf, e)}
}

/**
 * The lines of raw text as strings, a long line as pieces cut by safeCut (`span vocab`): the words
 * BERT's BasicTokenizer finds in the pieces are those of the whole line.
 */
export async function* rawPieces(src: Source, binary: BinaryMode, table: CharTable): AsyncGenerator<string> {
  for await (const b of readLineBatches(src, Infinity, binary, longLines(table))) {
    for (let i = 0; i < b.count; i++) yield b.buf.toString('utf8', b.start[i], b.end[i])
  }
}

/**
 * The last p in (0, e) where buf[0 .. e) can be tokenized as buf[0 .. p) and buf[p .. e): the
 * code point before p ends a word (whitespace, punctuation, a CJK ideograph: clean_text,
 * _tokenize_chinese_chars and _run_split_on_punc all split there) and the one at p starts
 * something of its own (not dropped, not a mark: a combining mark would join the character
 * before it under NFD and canonical reordering, and a dropped character does not end a word).
 * Both must be well-formed UTF-8 of the BMP with one normalised code unit (Kind, chars.ts).
 * -1 when there is no such place.
 */
export function safeCut(t: CharTable, buf: Uint8Array, e: number): number {
  for (let p = e - 1; p > 0; p--) {
    if ((buf[p] & 0xc0) === 0x80) continue // inside a character
    const next = codeAt(buf, p, e, false)
    if (next < 0 || !opens(t, next)) continue
    let q = p - 1
    while (q > 0 && p - q < 4 && (buf[q] & 0xc0) === 0x80) q--
    const prev = codeAt(buf, q, p, true)
    if (prev >= 0 && closes(t, prev)) return p
  }
  return -1
}

/** The code point at buf[i] (ending exactly at e when `exact`), or -1 when malformed. */
function codeAt(buf: Uint8Array, i: number, e: number, exact: boolean): number {
  if (buf[i] < 0x80) return exact && i + 1 !== e ? -1 : buf[i]
  const len = utf8Length(buf, i, e)
  if (len === 0 || (exact && i + len !== e)) return -1
  return utf8Decode(buf, i, len)
}

function closes(t: CharTable, c: number): boolean {
  const k = c < 0x10000 ? t.kind[c] : Kind.Complex
  return (k === Kind.Space || k === Kind.Punct || k === Kind.Cjk) && !t.reorder.has(c)
}

function opens(t: CharTable, c: number): boolean {
  const k = c < 0x10000 ? t.kind[c] : Kind.Complex
  return (k === Kind.Word || k === Kind.Space || k === Kind.Punct || k === Kind.Cjk) && !t.reorder.has(c)
}

/**
 * The ids of one long line, kept in an unlinked temporary file, for `--tokens`: the record lists
 * the ids first and the token strings after them, so the strings are written from a second read.
 */
export class IdSpool {
  private readonly fd: number
  private bytes = 0

  constructor() {
    const path = join(tmpdir(), `span-ids-${process.pid}-${Date.now()}.tmp`)
    this.fd = openSync(path, 'w+', 0o600)
    unlinkSync(path) // gone with the process, whatever happens to it
  }

  write(ids: Int32Array, n: number): void {
    const bytes = new Uint8Array(ids.buffer, ids.byteOffset, 4 * n)
    for (let at = 0; at < bytes.length;) at += writeSync(this.fd, bytes, at, bytes.length - at, this.bytes + at)
    this.bytes += bytes.length
  }

  /** The ids again, in order, a chunk at a time (the array is reused). */
  *chunks(size = 1 << 16): Generator<[Int32Array, number]> {
    const ids = new Int32Array(size)
    const view = new Uint8Array(ids.buffer)
    for (let at = 0; at < this.bytes;) {
      const got = readSync(this.fd, view, 0, Math.min(view.length, this.bytes - at), at)
      at += got
      yield [ids, got / 4]
    }
  }

  close(): void {
    closeSync(this.fd)
  }
}
