/**
 * What the masking schemes share (mask.ts' Masker and the selectors in mask-bert.ts and
 * mask-span.ts): the per-id vocabulary tables and the scratch space. A file of its own so that
 * the selectors need not import mask.ts, which imports them.
 */

/** What masking needs to know about the vocabulary: one byte per id. */
export interface MaskVocab {
  special: Uint8Array // 1: never masked, never drawn as a replacement
  cont: Uint8Array // 1: a `##` piece, which does not start a word (docs/algorithms.md#tokenization)
  maskId: number
}

/** Growable scratch space, so masking a block allocates little beyond its result. */
export class Scratch {
  masked = new Uint8Array(0)
  cand = new Int32Array(0)
  origin = new Int32Array(0)

  fit(len: number): void {
    if (this.masked.length < len) {
      this.masked = new Uint8Array(len * 2)
      this.cand = new Int32Array(len * 2)
      this.origin = new Int32Array(len * 2)
    }
    this.masked.fill(0, 0, len)
  }
}
