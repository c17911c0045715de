import {expect, it} from 'vitest'
import {BlockPacker, writeBlock, writePairBlock} from '../../../src/core/data/block.js'
import {NdjsonBytes} from '../../../src/core/stream/ndjson-bytes.js'
import type {TokenRecord} from '../../../src/core/data/records.js'
import {describeData, vocab, wikiRecords} from './helpers.js'

const {cls, sep} = vocab.special

function pack(recs: TokenRecord[], len: number) {
  const p = new BlockPacker(len, cls, sep)
  return [...recs.flatMap((r) => p.push(r)), ...p.finish()]
}

function append(m: Map<number, number[]>, doc: number, ids: number[]): void {
  const list = m.get(doc) ?? []
  for (const id of ids) list.push(id)
  m.set(doc, list)
}

describeData('BlockPacker (plain blocks)', () => {
  const recs = wikiRecords()

  for (const len of [16, 128, 512]) {
    it(`at --len ${len}: [CLS] … [SEP] within len, never across documents, no token lost`, () => {
      const blocks = pack(recs, len)
      const byDoc = new Map<number, number[]>()
      for (const r of recs) append(byDoc, r.doc, r.ids)
      const got = new Map<number, number[]>()
      let prevDoc = -1
      let bad = 0
      for (const b of blocks) {
        if (b.ids.length > len || b.ids.length <= 2 || b.ids[0] !== cls || b.ids.at(-1) !== sep) bad++
        if (b.doc < prevDoc) bad++ // documents in order, each block one document
        prevDoc = b.doc
        append(got, b.doc, b.ids.slice(1, -1))
      }
      expect(bad).toBe(0)
      expect(got).toEqual(byDoc)
    })
  }

  it('packs whole lines while they fit and splits only lines longer than len−2', () => {
    const line = (n: number, base: number) => Array.from({length: n}, (_, i) => base + i)
    const blocks = pack(
      [
        {doc: 0, ids: line(3, 1000)},
        {doc: 0, ids: line(3, 2000)},
        {doc: 0, ids: line(3, 3000)}, // 9 > 8: starts the next block
        {doc: 0, ids: line(19, 4000)}, // longer than 8: pieces of 8
        {doc: 1, ids: line(2, 5000)},
      ],
      10,
    )
    expect(blocks.map((b) => b.ids.length - 2)).toEqual([6, 3, 8, 8, 3, 2])
    expect(blocks.map((b) => b.doc)).toEqual([0, 0, 0, 0, 0, 1])
  })

  it('writes blocks and pair blocks as JSON.stringify would', () => {
    const out = new NdjsonBytes(16) // small: reserve() must grow it
    const b = {doc: 7, ids: [cls, 5, 60, 700, 8000, 90000, sep]}
    const p = {doc: -3, ids: [cls, 5, sep, 2147483648, sep], segments: [0, 0, 0, 1, 1], next: false}
    writeBlock(out, b)
    writePairBlock(out, p)
    writePairBlock(out, {...p, next: true, doc: 0})
    expect(out.take().toString()).toBe([b, p, {...p, next: true, doc: 0}].map((x) => JSON.stringify(x) + '\n').join(''))
    expect(out.length).toBe(0)
  })
})
