/**
 * Greedy longest-match-first WordPiece (google-research/bert tokenization.py
 * WordpieceTokenizer.tokenize; HF models/wordpiece): the longest vocabulary entry that
 * prefixes the rest of the word is the next piece; pieces after the first are looked up as
 * `##piece`; a word with a part that has no piece is [UNK] as a whole.
 *
 * The vocabulary is one hash table of its entries. For a piece starting at `pos`, the hashes
 * of all prefixes buf[pos .. pos + k) (k up to the longest entry) come from one FNV-1a pass,
 * then the table is probed from the longest prefix down; the first hit is the longest match.
 * Most words of real text are a single entry (about 92% in WikiText), found by the first probe.
 */

/** Words longer than this many code points are [UNK] (max_input_chars_per_word). */
export const MAX_WORD_CHARS = 100

/** FNV-1a over UTF-16 code units: h = imul(h ^ unit, FNV_PRIME) from FNV_BASIS. */
export const FNV_BASIS = 0x811c9dc5 | 0
export const FNV_PRIME = 0x01000193
const HASH = 0x23 // '#'

export class WordTable {
  private readonly hashes: Int32Array
  private readonly slotIds: Int32Array
  private readonly pool: Uint16Array // the entries' code units, back to back
  private readonly offsets: Int32Array // entry id → start in pool
  private readonly lengths: Int32Array // entry id → length in code units
  private readonly mask: number
  /** The longest entry, in code units: no piece is longer. */
  readonly longest: number
  /** The FNV state after `##`, where the hash of a continuation piece starts. */
  readonly contBasis = Math.imul(Math.imul(FNV_BASIS ^ HASH, FNV_PRIME) ^ HASH, FNV_PRIME)

  constructor(entries: Iterable<[string, number]>) {
    const list = [...entries].filter(([t]) => t.length > 0)
    const maxId = list.reduce((m, [, id]) => Math.max(m, id), 0)
    let cap = 16
    while (cap < 2 * list.length) cap *= 2
    this.mask = cap - 1
    this.hashes = new Int32Array(cap)
    this.slotIds = new Int32Array(cap).fill(-1)
    this.pool = new Uint16Array(list.reduce((s, [t]) => s + t.length, 0))
    this.offsets = new Int32Array(maxId + 1)
    this.lengths = new Int32Array(maxId + 1)
    this.longest = list.reduce((m, [t]) => Math.max(m, t.length), 0)
    let at = 0
    for (const [token, id] of list) {
      this.offsets[id] = at
      this.lengths[id] = token.length
      let f = FNV_BASIS
      for (let i = 0; i < token.length; i++) {
        this.pool[at++] = token.charCodeAt(i)
        f = Math.imul(f ^ token.charCodeAt(i), FNV_PRIME)
      }
      this.insert(mix(f), id)
    }
  }

  /** The id of the entry equal to buf[s .. e), or -1. */
  lookup(buf: Uint16Array, s: number, e: number): number {
    let f = FNV_BASIS
    for (let i = s; i < e; i++) f = Math.imul(f ^ buf[i], FNV_PRIME)
    return this.lookupHashed(buf, s, e, f, false)
  }

  /**
   * The id of the entry equal to buf[s .. e) (`##` + buf[s .. e) when cont), given `fnv`, the
   * FNV-1a of those units from FNV_BASIS (from contBasis when cont); -1 if there is none.
   */
  lookupHashed(buf: Uint16Array, s: number, e: number, fnv: number, cont: boolean): number {
    const h = mix(fnv)
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const id = this.slotIds[slot]
      if (id < 0) return -1
      if (this.hashes[slot] === h && this.equals(id, buf, s, e, cont)) return id
    }
  }

  private equals(id: number, buf: Uint16Array, s: number, e: number, cont: boolean): boolean {
    const skip = cont ? 2 : 0
    if (this.lengths[id] !== e - s + skip) return false
    let off = this.offsets[id]
    if (cont && (this.pool[off] !== HASH || this.pool[off + 1] !== HASH)) return false
    off += skip - s
    for (let i = s; i < e; i++) if (this.pool[off + i] !== buf[i]) return false
    return true
  }

  private insert(h: number, id: number): void {
    let slot = h & this.mask
    while (this.slotIds[slot] >= 0) slot = (slot + 1) & this.mask
    this.hashes[slot] = h
    this.slotIds[slot] = id
  }
}

/** A final mix of the FNV state so that the low bits (the slot) spread. */
function mix(h: number): number {
  h ^= h >>> 15
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 12)
}

let prefixHashes = new Int32Array(64)

/**
 * WordPiece of one word buf[s .. e) (normalised code units), appended to out from position at.
 * Returns the new end of out, or -1 when some part of the word has no piece: the caller then
 * writes one [UNK] for the whole word, as the reference does.
 */
export function wordPiece(table: WordTable, buf: Uint16Array, s: number, e: number, out: Int32Array, at: number): number {
  if (prefixHashes.length < table.longest + 1) prefixHashes = new Int32Array(table.longest + 1)
  const hashes = prefixHashes
  for (let pos = s; pos < e; ) {
    const cont = pos > s
    const most = Math.min(e - pos, table.longest)
    let h = cont ? table.contBasis : FNV_BASIS
    for (let k = 0; k < most; k++) hashes[k + 1] = h = Math.imul(h ^ buf[pos + k], FNV_PRIME)
    let k = most
    let id = -1
    for (; k > 0 && id < 0; k--) id = table.lookupHashed(buf, pos, pos + k, hashes[k], cont)
    if (id < 0) return -1
    out[at++] = id
    pos += k + 1
  }
  return at
}
