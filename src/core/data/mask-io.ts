import {errorAt} from '../stream/errors.js'
import type {Rec} from '../stream/ndjson.js'
import {DECISIONS, type MaskResult} from './mask.js'
import type {NdjsonBytes} from '../stream/ndjson-bytes.js'
import {checkIds, checkSegments, parseDoc} from './records.js'
import {parseTags, type Tag} from './tags.js'

/** A block as `span mask` reads it (docs/formats.md#blocks); pair blocks carry segments and next. */
export interface BlockRecord {
  doc?: number
  ids: number[]
  segments?: number[]
  next?: boolean
  tags?: Tag[] // docs/formats.md#tags; read by the tagged schemes
}

/** A headerless stream of masked examples is from the wrong stage. */
export function checkNotMasked(rec: Rec, source: string): void {
  if ('targets' in rec.value || 'spans' in rec.value) {
    throw errorAt(source, rec.line, 'expected blocks (from span block), got a masked example (from span mask)')
  }
}

/** Validates a block record: ids in the vocabulary, [CLS] first and [SEP] last. */
export function toBlockRecord(rec: Rec, vocabSize: number, cls: number, sep: number, source: string): BlockRecord {
  const v = rec.value
  const bad = (msg: string) => errorAt(source, rec.line, msg)
  checkNotMasked(rec, source)
  if (!('ids' in v)) throw bad('missing field "ids" (expected blocks from span block)')
  const ids = checkIds(v.ids, 'ids', vocabSize, source, rec.line)
  if (ids.length < 2 || ids[0] !== cls || ids[ids.length - 1] !== sep) {
    throw bad(`expected blocks (from span block), got ids that do not start with [CLS] (${cls}) and end with [SEP] (${sep}) (token records from span tokenize?)`)
  }
  const out: BlockRecord = {ids}
  const doc = parseDoc(v.doc, bad)
  if (doc !== null) out.doc = doc
  if (v.segments !== undefined) out.segments = checkSegments(v.segments, ids.length, bad)
  if (v.next !== undefined) {
    if (typeof v.next !== 'boolean') throw bad(`field "next" must be true or false, got ${JSON.stringify(v.next)}`)
    out.next = v.next
  }
  const tags = parseTags(v.tags, ids.length, bad)
  if (tags.length > 0) out.tags = tags
  return out
}

/**
 * One masked example as an NDJSON line, written as bytes: what JSON.stringify gives for
 * {doc, ids, segments, next, targets, spans} (doc, segments and next when the block has them),
 * at a fraction of the cost.
 */
export function writeMasked(out: NdjsonBytes, block: BlockRecord, res: MaskResult): void {
  out.reserve(64 + 12 * res.ids.length + 2 * (block.segments?.length ?? 0) + 13 * res.targets.length + 16 * res.spans.length)
  if (block.doc === undefined) out.ascii('{')
  else {
    out.ascii('{"doc":')
    out.int(block.doc)
    out.ascii(',')
  }
  out.ascii('"ids":')
  out.ints(res.ids)
  if (block.segments) {
    out.ascii(',"segments":')
    out.ints(block.segments)
  }
  if (block.next !== undefined) out.ascii(block.next ? ',"next":true' : ',"next":false')
  out.ascii(',"targets":[')
  const t = res.targets
  for (let i = 0; i < t.length; i += 2) {
    out.ascii(i === 0 ? '[' : ',[')
    out.int(t[i])
    out.ascii(',')
    out.int(t[i + 1])
    out.ascii(']')
  }
  out.ascii('],"spans":[')
  writeSpans(out, res.spans, res.origins)
  out.ascii(']}\n')
}

const QUOTED = DECISIONS.map((d) => `,"${d}"]`)
const OPEN = DECISIONS.map((d) => `,"${d}",`)

/** [start,end,"decision"], or with origins (tagged schemes) [start,end,"decision","LABEL"|"random"]. */
function writeSpans(out: NdjsonBytes, sp: number[], origins?: string[]): void {
  for (let i = 0; i < sp.length; i += 3) {
    out.ascii(i === 0 ? '[' : ',[')
    out.int(sp[i])
    out.ascii(',')
    out.int(sp[i + 1])
    if (!origins) {
      out.ascii(QUOTED[sp[i + 2]])
      continue
    }
    out.ascii(OPEN[sp[i + 2]])
    out.utf8(JSON.stringify(origins[i / 3]))
    out.ascii(']')
  }
}
