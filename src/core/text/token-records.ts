/**
 * Token records `{"doc":N,"ids":[...]}\n` written straight into byte chunks: the bytes of
 * `,<id>` for every id are prepared once in fixed-width slots, so a record is a few byte copies
 * (JSON.stringify per record halves the throughput of `span tokenize`). The output is exactly
 * what JSON.stringify would give.
 */
export const CHUNK = 1 << 16

const enc = new TextEncoder()
const DOC = enc.encode('{"doc":')
const IDS = enc.encode(',"ids":[')
const TOKENS = enc.encode('],"tokens":[')
const END = enc.encode(']}\n')

export class TokenRecordWriter {
  private readonly slots: Uint8Array // slot i (8 bytes): length, then `,` and the digits of id i
  private readonly wide: boolean // ids of 7 digits or more: per-byte copies instead of 7 fixed ones
  private chunk = new Uint8Array(CHUNK)
  private pos = 0
  private docNo = -1
  private prefix = new Uint8Array(0) // `{"doc":N,"ids":[` for the current document
  private none = true // the list being written in parts has no element yet

  /** `tokens`: the vocabulary's strings, to add `"tokens":[...]` to each record; null for ids only. */
  constructor(size: number, private readonly tokens: readonly string[] | null) {
    this.wide = size > 1_000_000
    this.slots = new Uint8Array(size * (this.wide ? 16 : 8))
    const slot = this.wide ? 16 : 8
    for (let id = 0; id < size; id++) {
      const text = `,${id}`
      this.slots[id * slot] = text.length
      for (let j = 0; j < text.length; j++) this.slots[id * slot + 1 + j] = text.charCodeAt(j)
    }
  }

  /** Queues one record; ids[0..n) must be ids of the vocabulary. */
  add(doc: number, ids: Int32Array, n: number): void {
    if (doc !== this.docNo) this.setDoc(doc)
    this.room(this.prefix.length + END.length + 16 * n + 16)
    const first = this.copy(this.prefix, this.pos) - 1 // at the `[`, which the first id's comma overwrites
    const p = this.wide ? this.idsWide(ids, n, first) : this.ids(ids, n, first)
    this.chunk[first] = 0x5b // [
    this.pos = n === 0 ? first + 1 : p
    if (this.tokens) this.addTokens(ids, n)
    else this.pos = this.copy(END, this.pos)
  }

  /**
   * `,id` for each id from chunk[p]: seven fixed byte copies per id (comma and up to six digits;
   * the bytes past its length are overwritten by what follows), then p moves by its length.
   */
  private ids(ids: Int32Array, n: number, p: number): number {
    const {chunk, slots} = this
    for (let i = 0; i < n; i++) {
      const at = ids[i] << 3
      chunk[p] = slots[at + 1]
      chunk[p + 1] = slots[at + 2]
      chunk[p + 2] = slots[at + 3]
      chunk[p + 3] = slots[at + 4]
      chunk[p + 4] = slots[at + 5]
      chunk[p + 5] = slots[at + 6]
      chunk[p + 6] = slots[at + 7]
      p += slots[at]
    }
    return p
  }

  private idsWide(ids: Int32Array, n: number, p: number): number {
    for (let i = 0; i < n; i++) {
      const at = ids[i] << 4
      for (let j = 1; j <= this.slots[at]; j++) this.chunk[p++] = this.slots[at + j]
    }
    return p
  }

  /**
   * A record written in parts, for a line too long to hold (tokenize's long lines, see
   * long-line.ts): open() writes `{"doc":N,"ids":[`, more() appends ids, tokensOpen() and
   * tokenStrings() the `"tokens"` list when there is one, close() `]}` and the newline. The bytes
   * equal add()'s for the same ids.
   */
  open(doc: number): void {
    if (doc !== this.docNo) this.setDoc(doc)
    this.room(this.prefix.length)
    this.pos = this.copy(this.prefix, this.pos)
    this.none = true
  }

  more(ids: Int32Array, n: number): void {
    if (n === 0) return
    this.room(16 * n + 16)
    const first = this.none ? this.pos - 1 : this.pos // the first id's comma overwrites the `[`
    this.pos = this.wide ? this.idsWide(ids, n, first) : this.ids(ids, n, first)
    if (this.none) this.chunk[first] = 0x5b // [
    this.none = false
  }

  tokensOpen(): void {
    this.room(TOKENS.length)
    this.pos = this.copy(TOKENS, this.pos)
    this.none = true
  }

  tokenStrings(ids: Int32Array, n: number): void {
    if (n === 0) return
    const parts: string[] = this.none ? [] : ['']
    for (let i = 0; i < n; i++) parts.push(JSON.stringify((this.tokens as readonly string[])[ids[i]]))
    const text = enc.encode(parts.join(','))
    this.room(text.length)
    this.pos = this.copy(text, this.pos)
    this.none = false
  }

  close(): void {
    this.room(END.length)
    this.pos = this.copy(END, this.pos)
  }

  /** Whether the record has a `"tokens"` list. */
  get withTokens(): boolean {
    return this.tokens !== null
  }

  /** Bytes waiting to be written. */
  get pending(): number {
    return this.pos
  }

  /** Hands over the queued bytes; the chunk is not reused afterwards (the stream may hold it). */
  take(): Buffer {
    const out = Buffer.from(this.chunk.buffer, this.chunk.byteOffset, this.pos)
    this.chunk = new Uint8Array(CHUNK)
    this.pos = 0
    return out
  }

  private addTokens(ids: Int32Array, n: number): void {
    const parts: string[] = []
    for (let i = 0; i < n; i++) parts.push(JSON.stringify((this.tokens as readonly string[])[ids[i]]))
    const text = enc.encode(parts.join(','))
    this.room(text.length + TOKENS.length + END.length)
    this.pos = this.copy(TOKENS, this.pos)
    this.pos = this.copy(text, this.pos)
    this.pos = this.copy(END, this.pos)
  }

  private setDoc(doc: number): void {
    this.docNo = doc
    const digits = String(doc)
    this.prefix = new Uint8Array(DOC.length + digits.length + IDS.length)
    this.prefix.set(DOC)
    for (let i = 0; i < digits.length; i++) this.prefix[DOC.length + i] = digits.charCodeAt(i)
    this.prefix.set(IDS, DOC.length + digits.length)
  }

  /** Makes room for `bytes` more; a record is never split across chunks. */
  private room(bytes: number): void {
    if (this.pos + bytes <= this.chunk.length) return
    const bigger = new Uint8Array(Math.max(CHUNK, 2 * (this.pos + bytes)))
    bigger.set(this.chunk.subarray(0, this.pos))
    this.chunk = bigger
  }

  private copy(bytes: Uint8Array, at: number): number {
    const chunk = this.chunk
    for (let i = 0; i < bytes.length; i++) chunk[at + i] = bytes[i]
    return at + bytes.length
  }
}
