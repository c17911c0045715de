/** The streaming loop of `span tag`: records in chunks, tagged, written in order (memory: one chunk). */
import {parseTags} from '../../data/tags.js'
import {checkIds} from '../../data/records.js'
import {errorAt} from '../../stream/errors.js'
import type {Header, StageKind} from '../../stream/header.js'
import type {Rec} from '../../stream/ndjson.js'
import type {LineWriter} from '../../stream/writer.js'
import type {Vocab} from '../../text/vocab.js'
import type {RecordTagger, TaggerOptions} from './tag-records.js'

/** The vocabulary tables the tagger reads: [UNK] is a word; [PAD], [CLS], [SEP], [MASK] and [unusedN] are not. */
export function taggerTables(vocab: Vocab): Pick<TaggerOptions, 'special' | 'specialTable' | 'cont' | 'tokens'> {
  const {pad, cls, sep, mask} = vocab.special
  const specialTable = new Uint8Array(vocab.tokens.length)
  const cont = new Uint8Array(vocab.tokens.length)
  vocab.tokens.forEach((t, id) => {
    if (t.startsWith('##')) cont[id] = 1
    else if (/^\[(unused\d+|[A-Z]+)\]$/.test(t) && id !== vocab.special.unk) specialTable[id] = 1
  })
  for (const id of [pad, cls, sep, mask]) specialTable[id] = 1
  return {special: {cls, sep, pad}, specialTable, cont, tokens: vocab.tokens}
}

/** tokens or blocks: the header's kind, else blocks when the first record is [CLS] … [SEP]. */
export function kindOf(h: Header | null, first: Record<string, unknown> | null, vocab: Vocab): StageKind {
  if (h) return h.kind
  const ids = first?.ids
  const {cls, sep} = vocab.special
  return Array.isArray(ids) && ids.length >= 2 && ids[0] === cls && ids.at(-1) === sep ? 'blocks' : 'tokens'
}

/** Progress on a terminal: records and tags so far, on one stderr line; nothing elsewhere. */
export class TagProgress {
  records = 0
  tags = 0
  constructor(private readonly stream: NodeJS.WriteStream) {}

  update(records: number, tags: number): void {
    this.records += records
    this.tags += tags
    if (this.stream.isTTY) this.stream.write(`\rspan tag: ${this.records} records, ${this.tags} tags`)
  }

  stop(): void {
    if (this.stream.isTTY && this.records > 0) this.stream.write('\r\x1b[K')
  }

  /** The closing stderr line: records, tags, and what was left out. */
  summary(t: {numericDropped: number; filteredOut: number}): string {
    const why = [
      t.numericDropped > 0 ? `; ${t.numericDropped} numeric entities dropped` : '',
      t.filteredOut > 0 ? `; ${t.filteredOut} tags of other labels left out` : '',
    ]
    return `span tag: ${this.records} records, ${this.tags} tags${why.join('')}\n`
  }
}

interface ChunkOptions {
  chunk: number
  vocabSize: number
  source: string
}

/** Tags `first` and the rest, `o.chunk` records at a time, each written back with its new `tags` (none: the field removed). */
export async function writeTagged(first: Rec, rest: AsyncIterable<Rec>, tagger: RecordTagger, o: ChunkOptions, w: LineWriter, p: TagProgress): Promise<void> {
  let buf: {value: Record<string, unknown>; ids: number[]}[] = []
  const flush = async () => {
    const tags = await tagger.tag(buf.map((r) => r.ids))
    let n = 0
    for (let i = 0; i < buf.length; i++) {
      const {tags: _old, ...rec} = buf[i].value
      n += tags[i].length
      await w.record(tags[i].length > 0 ? {...rec, tags: tags[i]} : rec)
    }
    p.update(buf.length, n)
    buf = []
  }
  const take = async (rec: Rec) => {
    const bad = (msg: string) => errorAt(o.source, rec.line, msg)
    if (!('ids' in rec.value)) throw bad('missing field "ids" (expected token records or blocks)')
    const ids = checkIds(rec.value.ids, 'ids', o.vocabSize, o.source, rec.line)
    parseTags(rec.value.tags, ids.length, bad) // replaced, but a bad field is still bad input
    buf.push({value: rec.value, ids})
    if (buf.length >= o.chunk) await flush()
  }
  await take(first)
  for await (const rec of rest) await take(rec)
  if (buf.length > 0) await flush()
}
