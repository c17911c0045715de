import {BasicScanner} from './basic.js'
import type {CharTable} from './chars.js'
import {byteEncoder, type ByteEncoder} from './byte-encoder.js'
import type {Vocab} from './vocab.js'
import {MAX_WORD_CHARS, WordTable, wordPiece} from './wordpiece.js'

/** kind << 16 | map for every BMP code unit, so that one read gives both. */
function classTable(sc: BasicScanner): Int32Array {
  const {kind, map} = sc.table
  const cls = new Int32Array(0x10000)
  for (let c = 0; c < 0x10000; c++) cls[c] = (kind[c] << 16) | map[c]
  return cls
}

export interface TokenizerOptions {
  /** Uncased mode: lowercase and strip accents (BERT's do_lower_case). */
  lowercase: boolean
}

/**
 * BERT's FullTokenizer without special tokens: BasicTokenizer then WordPiece. Agrees id for id
 * with Hugging Face `tokenizers` (BertNormalizer, BertPreTokenizer, WordPiece with `[UNK]`,
 * `##` and 100 characters per word), which the tests check on real text and adversarial input.
 * Text that looks like a special token (`[MASK]`) is plain text here, as in Google's reference.
 */
export class WordPieceTokenizer {
  readonly lowercase: boolean
  readonly unk: number
  private readonly scanner: BasicScanner
  private readonly table: WordTable
  private readonly bytes: ByteEncoder

  constructor(readonly vocab: Vocab, opts: TokenizerOptions) {
    this.lowercase = opts.lowercase
    this.unk = vocab.special.unk
    this.scanner = new BasicScanner(opts.lowercase)
    this.table = new WordTable(vocab.ids)
    const exact = (bytes: Uint8Array, from: number, e: number, at: number) => this.exact(bytes, from, e, at)
    this.bytes = byteEncoder({cls: classTable(this.scanner), table: this.table, unk: this.unk, exact})
  }

  /** The character table of the BasicTokenizer (what a cut in a long line must respect, long-line.ts). */
  get chars(): CharTable {
    return this.scanner.table
  }

  /** Token ids of one line. */
  encode(text: string): number[] {
    const n = this.encodeInto(text)
    return Array.from(this.ids().subarray(0, n))
  }

  /** Token strings of one line. */
  tokenize(text: string): string[] {
    return this.encode(text).map((id) => this.vocab.tokens[id])
  }

  /** The BasicTokenizer's words of one line (normalised): what the vocabulary learner counts. */
  basic(text: string): string[] {
    return this.scanner.basic(text)
  }

  /**
   * The fast path: ids of one line into `ids()` (valid until the next call); returns how many.
   * Allocates nothing per line once the buffers have grown to the longest line.
   */
  encodeInto(text: string): number {
    return this.pieces(this.scanner.scan(text), 0)
  }

  /**
   * encodeInto for a line given as UTF-8 bytes bytes[s .. e), without decoding it to a string
   * (see byte-encoder.ts). Returns -1 when the bytes are not well-formed UTF-8: decode the line
   * (which gives U+FFFD) and call encodeInto.
   */
  encodeBytes(bytes: Uint8Array, s: number, e: number): number {
    return this.bytes.encode(bytes, s, e)
  }

  /** The rest of a line from bytes[from] (a word start), through the exact scanner, ids from out[at]. */
  private exact(bytes: Uint8Array, from: number, e: number, at: number): number {
    const words = this.scanner.scanBytes(bytes, from, e)
    return words < 0 ? -1 : this.pieces(words, at)
  }

  /** The buffer `encodeInto` and `encodeBytes` fill. */
  ids(): Int32Array {
    return this.bytes.out()
  }

  /** True when every character of the line is whitespace to the tokenizer (a blank line). */
  isBlank(text: string): boolean {
    return this.scanner.isBlank(text)
  }

  /** WordPiece of the scanner's words into `out`; a word over 100 characters or without pieces is [UNK]. */
  private pieces(words: number, at: number): number {
    const sc = this.scanner
    const out = this.bytes.reserve(at + sc.buf.length + words, at)
    const {buf, start, end} = sc
    for (let w = 0; w < words; w++) {
      const s = start[w]
      const e = end[w]
      if (e - s > MAX_WORD_CHARS && sc.codePoints(w) > MAX_WORD_CHARS) {
        out[at++] = this.unk
        continue
      }
      const next = wordPiece(this.table, buf, s, e, out, at)
      if (next < 0) out[at++] = this.unk
      else at = next
    }
    return at
  }
}
