import type {NdjsonBytes} from '../stream/ndjson-bytes.js'
import type {TokenRecord} from './records.js'

export interface Block {
  doc: number
  ids: number[] // [CLS] ... [SEP]
}

/**
 * Packs the lines of one document into blocks (SpanBERT appendix A; reference `BlockDataset`,
 * break mode `doc`): whole consecutive lines while the block stays within len-2 tokens; a line
 * that would overflow starts the next block; a line longer than len-2 is cut into pieces of
 * len-2 (the reference drops it; we keep the text, docs/algorithms.md#blocks). Blocks never cross documents.
 */
export class BlockPacker {
  private doc: number | null = null
  private cur: number[] = []

  constructor(private readonly len: number, private readonly cls: number, private readonly sep: number) {}

  /** Adds a line; returns the blocks it completed. */
  push(rec: TokenRecord): Block[] {
    const out: Block[] = []
    if (rec.doc !== this.doc) this.flushInto(out)
    this.doc = rec.doc
    const room = this.len - 2
    if (rec.ids.length === 0) return out
    if (this.cur.length + rec.ids.length > room) this.flushInto(out)
    if (rec.ids.length > room) {
      let i = 0
      for (; i + room < rec.ids.length; i += room) out.push(this.wrap(rec.ids.slice(i, i + room)))
      this.cur = rec.ids.slice(i)
    } else {
      for (const id of rec.ids) this.cur.push(id)
    }
    return out
  }

  /** The last, partial block. */
  finish(): Block[] {
    const out: Block[] = []
    this.flushInto(out)
    return out
  }

  private flushInto(out: Block[]): void {
    if (this.cur.length > 0) out.push(this.wrap(this.cur))
    this.cur = []
  }

  private wrap(ids: number[]): Block {
    return {doc: this.doc ?? 0, ids: [this.cls, ...ids, this.sep]}
  }
}

/** A block as its NDJSON line, in bytes: what JSON.stringify gives, without it (a hot path). */
export function writeBlock(out: NdjsonBytes, b: Block): void {
  out.reserve(40 + 12 * b.ids.length)
  out.ascii('{"doc":')
  out.int(b.doc)
  out.ascii(',"ids":')
  out.ints(b.ids)
  out.ascii('}\n')
}

/** A pair block ({doc, ids, segments, next}) as its NDJSON line, in bytes. */
export function writePairBlock(out: NdjsonBytes, b: {doc: number; ids: number[]; segments: number[]; next: boolean}): void {
  out.reserve(60 + 14 * b.ids.length)
  out.ascii('{"doc":')
  out.int(b.doc)
  out.ascii(',"ids":')
  out.ints(b.ids)
  out.ascii(',"segments":')
  out.ints(b.segments)
  out.ascii(b.next ? ',"next":true}\n' : ',"next":false}\n')
}
