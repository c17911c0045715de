/**
 * NDJSON built straight into bytes, for the hot outputs (`span mask`, `span block`): writing the
 * digits of an id into a Buffer is ~3× faster than `ids.join(',')` and skips the UTF-8 encoding
 * of the string on write. Only for ASCII text and integers; the bytes equal what JSON.stringify
 * would give. `take()` hands the filled part over and starts a fresh buffer (the stream may still
 * hold the old one), so the caller writes it with LineWriter.raw when `length` passes its chunk size.
 */
export class NdjsonBytes {
  private buf: Buffer
  private at = 0

  constructor(private readonly initial = 1 << 17) {
    this.buf = Buffer.allocUnsafe(initial)
  }

  get length(): number {
    return this.at
  }

  /** Makes room for `n` more bytes. */
  reserve(n: number): void {
    if (this.at + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(bigger, 0, 0, this.at)
    this.buf = bigger
  }

  /** The bytes written so far; the builder starts over with a new buffer. */
  take(): Buffer {
    const out = this.buf.subarray(0, this.at)
    this.buf = Buffer.allocUnsafe(Math.max(this.initial, out.length))
    this.at = 0
    return out
  }

  /** ASCII text (keys, punctuation); the caller reserved room. */
  ascii(s: string): void {
    for (let i = 0; i < s.length; i++) this.buf[this.at++] = s.charCodeAt(i)
  }

  /** Any text as UTF-8 (tag labels, which may be any string); reserves its own room. */
  utf8(s: string): void {
    const n = Buffer.byteLength(s)
    this.reserve(n)
    this.at += this.buf.write(s, this.at)
  }

  /** An integer in decimal; the caller reserved room (at most 16 bytes for a safe integer). */
  int(n: number): void {
    if (n < 0 || n > 0x7fffffff) return this.ascii(String(n))
    const buf = this.buf
    const len = n < 10 ? 1 : n < 100 ? 2 : n < 1000 ? 3 : n < 10000 ? 4 : n < 100000 ? 5 : n < 1000000 ? 6 : String(n).length
    const end = this.at + len
    for (let p = end - 1; p >= this.at; p--) {
      const q = (n / 10) | 0
      buf[p] = 48 + n - q * 10
      n = q
    }
    this.at = end
  }

  /** `[a,b,…]`; reserve 12 bytes per element plus 2. */
  ints(list: ArrayLike<number>): void {
    this.buf[this.at++] = 91 // [
    for (let i = 0; i < list.length; i++) {
      if (i > 0) this.buf[this.at++] = 44 // ,
      this.int(list[i])
    }
    this.buf[this.at++] = 93 // ]
  }
}
