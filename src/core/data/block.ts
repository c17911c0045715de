import type {NdjsonBytes} from '../stream/ndjson-bytes.js'
import type {TokenRecord} from './records.js'
import {tagsJson, type Tag} from './tags.js'

export interface Block {
  doc: number
  ids: number[] // [CLS] ... [SEP]
  tags?: Tag[] // re-based to the block's ids (docs/formats.md#tags); absent when none
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
  private curTags: Tag[] = []
  /** Tags dropped because a block edge cut them (only where a line longer than len-2 is split). */
  droppedTags = 0
  /** Tags carried into blocks. */
  keptTags = 0

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
      for (; i + room < rec.ids.length; i += room) {
        this.curTags = this.tagsWithin(rec.tags, i, i + room, 0)
        out.push(this.wrap(rec.ids.slice(i, i + room)))
      }
      this.curTags = this.tagsWithin(rec.tags, i, rec.ids.length, 0)
      this.cur = rec.ids.slice(i)
    } else {
      for (const t of rec.tags ?? []) this.curTags.push([t[0] + this.cur.length, t[1] + this.cur.length, t[2]])
      this.keptTags += rec.tags?.length ?? 0
      for (const id of rec.ids) this.cur.push(id)
    }
    return out
  }

  /**
   * The tags of a line that lie wholly in its piece [from, to), moved to `at` + their offset in
   * the piece; a tag the piece edge cuts is dropped, not clipped (a clipped entity or noun phrase
   * is no longer one), and counted.
   */
  private tagsWithin(tags: Tag[] | undefined, from: number, to: number, at: number): Tag[] {
    const kept: Tag[] = []
    for (const t of tags ?? []) {
      if (t[0] >= from && t[1] < to) kept.push([t[0] - from + at, t[1] - from + at, t[2]])
      else if (t[0] < to && t[1] >= from && t[0] >= from) this.droppedTags++ // counted once: in the piece where it starts
    }
    this.keptTags += kept.length
    return kept
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
    this.curTags = []
  }

  /** [CLS] ids [SEP], with the pending tags shifted past [CLS]. */
  private wrap(ids: number[]): Block {
    const b: Block = {doc: this.doc ?? 0, ids: [this.cls, ...ids, this.sep]}
    if (this.curTags.length > 0) b.tags = this.curTags.map(([s, e, l]) => [s + 1, e + 1, l])
    this.curTags = []
    return b
  }
}

/** A block as its NDJSON line, in bytes: what JSON.stringify gives, without it (a hot path). */
export function writeBlock(out: NdjsonBytes, b: Block): void {
  out.reserve(40 + 12 * b.ids.length)
  out.ascii('{"doc":')
  out.int(b.doc)
  out.ascii(',"ids":')
  out.ints(b.ids)
  if (b.tags) {
    out.ascii(',"tags":')
    out.utf8(tagsJson(b.tags))
  }
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
