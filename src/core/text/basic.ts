import {Kind, MAX_EXPANSION, Pre, astralOut, charTable, preClass, reorderUncased, type CharTable} from './chars.js'

/**
 * BERT's BasicTokenizer as one pass over a line (google-research/bert tokenization.py
 * BasicTokenizer.tokenize; HF BertNormalizer + BertPreTokenizer): clean text (drop U+0000,
 * U+FFFD, control and format chars; whitespace → space), pad CJK ideographs, when uncased
 * strip accents (NFD, drop Mn) and lowercase, split on whitespace, isolate punctuation.
 *
 * The normalised words are written as UTF-16 code units into `buf`; word i is
 * buf[start[i] .. end[i]). Nothing is allocated per line once the buffers are large enough.
 */
export class BasicScanner {
  readonly table: CharTable
  buf = new Uint16Array(4096)
  start = new Int32Array(4096)
  end = new Int32Array(4096)
  words = 0
  private n = 0 // code units in buf
  private open = false // a word is being built
  private reordered = false // the line has a mark that canonical reordering may move (uncased)
  private readonly cache = new Array<string | undefined>(WORD_CACHE) // see word()

  constructor(lowercase: boolean) {
    this.table = charTable(lowercase)
  }

  /** Scans one line; returns the number of words. */
  scan(text: string): number {
    const len = text.length
    const room = len * MAX_EXPANSION + 8 // no growth inside the loop
    if (this.buf.length < room) this.grow(2 * room)
    const {kind, map} = this.table
    const {buf, start, end} = this
    let n = 0
    let w = 0
    let open = false
    this.reordered = false
    for (let i = 0; i < len; i++) {
      const c = text.charCodeAt(i)
      const k = kind[c]
      if (k === Kind.Word) {
        if (!open) {
          start[w] = n
          open = true
        }
        buf[n++] = map[c]
      } else if (k === Kind.Space) {
        if (open) {
          end[w++] = n
          open = false
        }
      } else if (k === Kind.Punct || k === Kind.Cjk) {
        if (open) end[w++] = n
        open = false
        start[w] = n
        buf[n++] = map[c]
        end[w++] = n
      } else if (k === Kind.Complex) {
        this.n = n
        this.words = w
        this.open = open
        i = this.complex(text, i)
        ;({n, words: w, open} = this)
      } // Kind.Removed: nothing, and the word goes on
    }
    if (open) end[w++] = n
    this.words = w
    return this.reordered ? this.scanReordered(text) : w
  }

  /**
   * scan() over UTF-8 bytes buf[s .. e), without decoding the line to a string first. Returns -1
   * at malformed UTF-8 (the caller then decodes the line, U+FFFD and all, and calls scan).
   * The tokenizer's ASCII loop hands lines over to this at their first non-ASCII word.
   */
  scanBytes(bytes: Uint8Array, s: number, e: number): number {
    const room = (e - s) * MAX_EXPANSION + 8
    if (this.buf.length < room) this.grow(2 * room)
    this.n = 0
    this.words = 0
    this.open = false
    this.reordered = false
    const words = this.scanUtf8(bytes, s, e)
    return words >= 0 && this.reordered ? this.scanReordered(new TextDecoder().decode(bytes.subarray(s, e))) : words
  }

  /** The line again, normalised as a whole (reorderUncased), then split as BertPreTokenizer does. */
  private scanReordered(text: string): number {
    this.n = 0
    this.words = 0
    this.open = false
    this.emit(reorderUncased(this.table, text))
    this.close()
    return this.words
  }

  /** A line from bytes[i], any UTF-8, one code point at a time; state in this.n/words/open. */
  private scanUtf8(bytes: Uint8Array, i: number, e: number): number {
    const {kind} = this.table
    for (; i < e; i++) {
      let c = bytes[i]
      if (c >= 0x80) {
        const len = utf8Length(bytes, i, e)
        if (len === 0) return -1
        c = utf8Decode(bytes, i, len)
        i += len - 1
      }
      if (c > 0xffff || kind[c] === Kind.Complex) this.complexCp(c)
      else this.unit(c, kind[c])
    }
    this.close()
    return this.words
  }

  /** One BMP code point of a simple kind (not Complex). */
  private unit(c: number, k: number): void {
    if (k === Kind.Removed) return
    if (k !== Kind.Word) this.close()
    if (k === Kind.Space) return
    if (!this.open) {
      this.start[this.words] = this.n
      this.open = true
    }
    this.buf[this.n++] = this.table.map[c]
    if (k !== Kind.Word) this.close()
  }

  /** True when the line is only whitespace to the tokenizer (what makes a line blank). */
  isBlank(text: string): boolean {
    const kind = this.table.kind
    for (let i = 0; i < text.length; i++) if (kind[text.charCodeAt(i)] !== Kind.Space) return false
    return true
  }

  /** The words of a line as strings: what the vocabulary learner counts. */
  basic(text: string): string[] {
    const count = this.scan(text)
    const words = new Array<string>(count)
    for (let i = 0; i < count; i++) words[i] = this.word(i)
    return words
  }

  /**
   * Word i as a string. Recent words come from a small direct-mapped cache (by FNV-1a of the
   * units), so that frequent words are neither rebuilt nor re-hashed by the Map that counts them.
   */
  word(i: number): string {
    const s = this.start[i]
    const e = this.end[i]
    if (e - s > 24) return decodeUnits(this.buf, s, e)
    let h = 0x811c9dc5 | 0
    for (let j = s; j < e; j++) h = Math.imul(h ^ this.buf[j], 0x01000193)
    const slot = (h ^ (h >>> 13)) & (WORD_CACHE - 1)
    const hit = this.cache[slot]
    if (hit !== undefined && sameUnits(hit, this.buf, s, e)) return hit
    return (this.cache[slot] = decodeUnits(this.buf, s, e))
  }

  /** Code points (not code units) in word i: WordPiece's 100-character limit counts these. */
  codePoints(i: number): number {
    let count = 0
    for (let j = this.start[i]; j < this.end[i]; j++) if ((this.buf[j] & 0xfc00) !== 0xdc00) count++
    return count
  }

  /** A code unit whose normalised form is several code points, or a surrogate pair. Returns the last index used. */
  private complex(text: string, i: number): number {
    const c = text.charCodeAt(i)
    if (c < 0xd800 || c >= 0xdc00) {
      this.complexCp(c)
      return i
    }
    const lo = i + 1 < text.length ? text.charCodeAt(i + 1) : 0
    if ((lo & 0xfc00) !== 0xdc00) return i // lone high surrogate: removed (HF sees U+FFFD)
    this.complexCp(((c - 0xd800) << 10) + (lo - 0xdc00) + 0x10000)
    return i + 1
  }

  /** A code point of kind Complex, or an astral one: its normalised text, split. */
  private complexCp(cp: number): void {
    if (this.table.reorder.has(cp)) this.reordered = true
    this.emit(cp > 0xffff ? astralOut(this.table, cp) : (this.table.complex.get(cp) as string))
  }

  /** Appends normalised text, classifying each code point as BertPreTokenizer does. */
  private emit(out: string): void {
    for (let j = 0; j < out.length; j++) {
      const cp = out.codePointAt(j) as number
      const p = preClass(cp)
      if (p !== Pre.Other) this.close()
      if (p !== Pre.Whitespace) {
        if (!this.open) {
          this.start[this.words] = this.n
          this.open = true
        }
        this.buf[this.n++] = out.charCodeAt(j)
        if (cp > 0xffff) this.buf[this.n++] = out.charCodeAt(++j)
        if (p === Pre.Punct) this.close()
      } else if (cp > 0xffff) j++
    }
  }

  private close(): void {
    if (this.open) this.end[this.words++] = this.n
    this.open = false
  }

  private grow(size: number): void {
    this.buf = new Uint16Array(size)
    this.start = new Int32Array(size)
    this.end = new Int32Array(size)
  }
}

const WORD_CACHE = 1 << 12

function decodeUnits(buf: Uint16Array, s: number, e: number): string {
  if (e - s < 64) return String.fromCharCode.apply(null, buf.subarray(s, e) as unknown as number[])
  return new TextDecoder('utf-16le').decode(buf.subarray(s, e))
}

function sameUnits(str: string, buf: Uint16Array, s: number, e: number): boolean {
  if (str.length !== e - s) return false
  for (let j = s; j < e; j++) if (str.charCodeAt(j - s) !== buf[j]) return false
  return true
}

/**
 * Length of the well-formed UTF-8 sequence at bytes[i] (a byte >= 0x80), or 0 when it is
 * malformed (Unicode Table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
 */
export function utf8Length(bytes: Uint8Array, i: number, e: number): number {
  const b0 = bytes[i]
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(bytes, i + 1, e, 0x80, 0xbf) ? 2 : 0
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const lo = b0 === 0xe0 ? 0xa0 : 0x80
    const hi = b0 === 0xed ? 0x9f : 0xbf
    return cont(bytes, i + 1, e, lo, hi) && cont(bytes, i + 2, e, 0x80, 0xbf) ? 3 : 0
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const lo = b0 === 0xf0 ? 0x90 : 0x80
    const hi = b0 === 0xf4 ? 0x8f : 0xbf
    return cont(bytes, i + 1, e, lo, hi) && cont(bytes, i + 2, e, 0x80, 0xbf) && cont(bytes, i + 3, e, 0x80, 0xbf) ? 4 : 0
  }
  return 0
}

function cont(bytes: Uint8Array, j: number, e: number, lo: number, hi: number): boolean {
  return j < e && bytes[j] >= lo && bytes[j] <= hi
}

/** The code point of a well-formed sequence of `len` bytes at bytes[i]. */
export function utf8Decode(bytes: Uint8Array, i: number, len: number): number {
  if (len === 2) return ((bytes[i] & 0x1f) << 6) | (bytes[i + 1] & 0x3f)
  if (len === 3) return ((bytes[i] & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f)
  return ((bytes[i] & 0x07) << 18) | ((bytes[i + 1] & 0x3f) << 12) | ((bytes[i + 2] & 0x3f) << 6) | (bytes[i + 3] & 0x3f)
}
