import {readNdjson, type Rec} from './ndjson.js'
import {checkKind, isHeader, parseHeader, type Header, type StageKind} from './header.js'
import type {Source} from './lines.js'

/** A stage's input: the header (null for hand-written streams) and the records after it. */
export interface StageInput {
  source: string
  header: Header | null
  records: AsyncGenerator<Rec>
}

/**
 * Opens a record stream, reading the header if there is one and checking that it comes from a
 * stage this one can read. An empty input gives no header and no records (not an error).
 */
export async function openStage(src: Source, expected: StageKind[]): Promise<StageInput> {
  const it = readNdjson(src)
  const first = await it.next()
  if (first.done) return {source: src.name, header: null, records: it}
  if (isHeader(first.value)) {
    const header = parseHeader(first.value, src.name)
    checkKind(header, expected, src.name, first.value.line)
    return {source: src.name, header, records: it}
  }
  async function* withFirst(): AsyncGenerator<Rec> {
    yield first.value as Rec
    yield* it
  }
  return {source: src.name, header: null, records: withFirst()}
}
