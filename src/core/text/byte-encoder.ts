import {utf8Decode, utf8Length} from './basic.js'
import {Kind} from './chars.js'
import {FNV_BASIS, FNV_PRIME, MAX_WORD_CHARS, wordPiece, type WordTable} from './wordpiece.js'

/**
 * The hot path of `span tokenize`: token ids of a line given as UTF-8 bytes, without decoding
 * it to a string. Three loops, each handing the line over to the next at the start of the word
 * it cannot take:
 *   - ASCII, with a 128-entry class table;
 *   - any BMP character that normalises to one code unit, UTF-8 decoded on the way;
 *   - the exact scanner (BasicScanner) for the rest: astral characters, characters that
 *     normalise to several code points, marks that canonical reordering may move.
 * Each word is hashed as it is read; most words are one vocabulary entry, found by one probe.
 * A closure rather than a class: V8 keeps the captured tables in registers across the loops.
 */
export interface ByteEncoderParts {
  cls: Int32Array // per BMP code unit: kind << 16 | normalised unit (see chars.ts)
  table: WordTable
  unk: number
  /** The exact path from bytes[from] (a word start); appends at out[at]; -1 on malformed UTF-8. */
  exact(bytes: Uint8Array, from: number, e: number, at: number): number
}

export interface ByteEncoder {
  /** Ids of bytes[s .. e) into out(); returns how many, or -1 on malformed UTF-8. */
  encode(bytes: Uint8Array, s: number, e: number): number
  /** The id buffer (replaced when it grows). */
  out(): Int32Array
  /** An id buffer of at least `size`, keeping out()[0 .. keep). */
  reserve(size: number, keep: number): Int32Array
}

export function byteEncoder(parts: ByteEncoderParts): ByteEncoder {
  const {cls, table, unk, exact} = parts
  const ascii = cls.slice(0, 128)
  const single = asciiSingleIds(table, unk)
  let out = new Int32Array(4096)
  let word = new Uint16Array(256)
  const one = new Uint16Array(1)

  /** The ids of the current word (n units in `word`, FNV hash h), appended at out[at]. */
  function wordIds(n: number, h: number, at: number): number {
    const id = table.lookupHashed(word, 0, n, h, false)
    if (id >= 0 || n > MAX_WORD_CHARS) {
      out[at] = n > MAX_WORD_CHARS ? unk : id
      return at + 1
    }
    const next = wordPiece(table, word, 0, n, out, at)
    if (next >= 0) return next
    out[at] = unk
    return at + 1
  }

  /** The id of a one-character word (punctuation, CJK), [UNK] when the vocabulary lacks it. */
  function singleId(u: number): number {
    if (u < 128) return single[u]
    one[0] = u
    const id = table.lookupHashed(one, 0, 1, Math.imul(FNV_BASIS ^ u, FNV_PRIME), false)
    return id < 0 ? unk : id
  }

  function asciiLoop(bytes: Uint8Array, s: number, e: number): number {
    let at = 0
    for (let i = s; i < e; ) {
      let c = bytes[i]
      if (c >= 0x80) return wideLoop(bytes, i, e, at)
      let v = ascii[c]
      let k = v >>> 16
      if (k !== Kind.Word) {
        if (k === Kind.Punct) out[at++] = single[v & 0xffff]
        i++ // Space, Removed
        continue
      }
      const from = i
      let n = 0
      let h = FNV_BASIS
      for (;;) {
        if (k === Kind.Word) {
          word[n++] = v & 0xffff
          h = Math.imul(h ^ (v & 0xffff), FNV_PRIME)
        } // Kind.Removed: dropped, the word goes on
        if (++i === e) break
        c = bytes[i]
        if (c >= 0x80) return wideLoop(bytes, from, e, at)
        k = (v = ascii[c]) >>> 16
        if (k !== Kind.Word && k !== Kind.Removed) break
      }
      at = wordIds(n, h, at)
    }
    return at
  }

  function wideLoop(bytes: Uint8Array, s: number, e: number, at: number): number {
    for (let i = s; i < e; ) {
      let cl = bytes[i] < 0x80 ? 0x10000 | bytes[i] : bmpAt(bytes, i, e)
      let v = cl < 0 ? Kind.Complex << 16 : cls[cl & 0xffff]
      let k = v >>> 16
      if (k !== Kind.Word) {
        if (k === Kind.Complex) return exact(bytes, i, e, at)
        if (k === Kind.Punct || k === Kind.Cjk) out[at++] = singleId(v & 0xffff)
        i += cl >>> 16 // Space, Removed
        continue
      }
      const from = i
      let n = 0
      let h = FNV_BASIS
      for (;;) {
        if (k === Kind.Word) {
          word[n++] = v & 0xffff
          h = Math.imul(h ^ (v & 0xffff), FNV_PRIME)
        }
        if ((i += cl >>> 16) === e) break
        cl = bytes[i] < 0x80 ? 0x10000 | bytes[i] : bmpAt(bytes, i, e)
        k = cl < 0 ? Kind.Complex : (v = cls[cl & 0xffff]) >>> 16
        if (k === Kind.Complex) return exact(bytes, from, e, at) // its output may extend the word
        if (k !== Kind.Word && k !== Kind.Removed) break
      }
      at = wordIds(n, h, at)
    }
    return at
  }

  function reserve(size: number, keep: number): Int32Array {
    if (out.length >= size) return out
    const bigger = new Int32Array(2 * size)
    bigger.set(out.subarray(0, keep))
    return (out = bigger)
  }

  return {
    encode(bytes, s, e) {
      reserve(e - s + 8, 0) // at most one id per byte here; the exact path reserves its own
      if (word.length < e - s) word = new Uint16Array(2 * (e - s))
      return asciiLoop(bytes, s, e)
    },
    out: () => out,
    reserve,
  }
}

/** The id of each ASCII character as a one-character word, [UNK] where the vocabulary lacks it. */
function asciiSingleIds(table: WordTable, unk: number): Int32Array {
  return Int32Array.from({length: 128}, (_, u) => table.lookup(Uint16Array.of(u), 0, 1)).map((id) => (id < 0 ? unk : id))
}

/**
 * The BMP code point of the 2- or 3-byte UTF-8 sequence at bytes[i], as its byte length << 16 |
 * code point; -1 for a 4-byte (astral) or malformed one, which the exact scanner takes.
 */
function bmpAt(bytes: Uint8Array, i: number, e: number): number {
  const len = utf8Length(bytes, i, e)
  return len === 2 || len === 3 ? (len << 16) | utf8Decode(bytes, i, len) : -1
}
