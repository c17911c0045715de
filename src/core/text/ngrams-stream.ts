/**
 * The streams of `span segment-ngrams`: building a dictionary from text (lines or a JSONL field)
 * and adding segmentations to text lines, JSONL records or token records.
 */
import {errorAt} from '../stream/errors.js'
import {nextHeader, parseHeader, checkKind, type HistoryEntry} from '../stream/header.js'
import {maxLineBytes, type BinaryMode} from '../stream/bytelines.js'
import {readLines, type Line, type Source} from '../stream/lines.js'
import type {LineWriter} from '../stream/writer.js'
import type {NgramCounter} from './ngrams-count.js'
import {formatBatch} from './ngrams-runs.js'
import {headerLine, isPunctWord, tokenSpans, tokenWords, type Segment, type WordSplitter} from './ngrams.js'

/** Segments one sentence's words (the dictionary's greedy rule, or the random ablation). */
export type Segmenter = (words: string[]) => Segment[]

/** The texts of a stream: every line, or the string `field` of each JSONL record. */
export async function* texts(lines: AsyncIterable<Line>, source: string, field?: string): AsyncGenerator<{text: string; rec: Record<string, unknown> | null; no: number}> {
  for await (const {text, no} of lines) {
    if (field === undefined) {
      yield {text, rec: null, no}
      continue
    }
    if (text.trim() === '') continue
    const rec = parseObject(text, source, no)
    const value = rec[field]
    if (typeof value !== 'string') throw errorAt(source, no, `field ${JSON.stringify(field)} must be a string, got ${value === undefined ? 'nothing' : JSON.stringify(value).slice(0, 40)}`)
    yield {text: value, rec, no}
  }
}

function parseObject(text: string, source: string, no: number): Record<string, unknown> {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (err) {
    throw errorAt(source, no, `invalid JSON: ${(err as Error).message}`)
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw errorAt(source, no, 'expected a JSON object')
  return v as Record<string, unknown>
}

/** Counts every sentence (line; lines inside a JSONL field too) of the input. */
export async function countNgrams(lines: AsyncIterable<Line>, source: string, field: string | undefined, counter: NgramCounter, split: WordSplitter): Promise<void> {
  for await (const {text} of texts(lines, source, field)) {
    for (const sentence of field === undefined ? [text] : text.split(/\r?\n/)) {
      const words = split.words(sentence)
      if (words.length > 1) counter.add(words, words.map(isPunctWord))
    }
    await counter.maybeSpill()
  }
}

/** Writes the dictionary: header line, then entries in order. */
export async function writeDictionary(counter: NgramCounter, w: LineWriter, onSize: (n: number) => void = () => {}): Promise<number> {
  const {size, entries} = await counter.ordered()
  onSize(size) // known before the writes: a reader that goes away (`| head`) does not change it
  const {maxN, minCount, maxSize} = counter.opts
  await w.line(headerLine({maxN, minCount, maxSize, entries: size}))
  for await (const batch of entries) await w.raw(formatBatch(batch))
  return size
}

/** Words and segments of a text; each line of it is a sentence of its own (segments never cross). */
export function segmentText(text: string, split: WordSplitter, seg: Segmenter): {words: string[]; segments: Segment[]} {
  const words: string[] = []
  const segments: Segment[] = []
  for (const sentence of text.split(/\r?\n/)) {
    const ws = split.words(sentence)
    const at = words.length
    for (const [s, e] of seg(ws)) segments.push([s + at, e + at])
    for (const w of ws) words.push(w) // no push(...ws): a line of a million words would overflow the call stack
  }
  return {words, segments}
}

/** Text lines or JSONL records in, one record with words and segments out (blank text lines skipped). */
export async function segmentTexts(lines: AsyncIterable<Line>, source: string, field: string | undefined, split: WordSplitter, seg: Segmenter, w: LineWriter): Promise<void> {
  for await (const {text, rec} of texts(lines, source, field)) {
    if (rec === null && text.trim() === '') continue
    const {words, segments} = segmentText(text, split, seg)
    await w.record(rec === null ? {text, words, segments} : {...rec, words, segments})
  }
}

/**
 * Token records in (`span tokenize --tokens`), the same records out with `spans`: the word
 * segments as inclusive token ranges. The header, if any, is passed on with this stage appended.
 */
export async function segmentTokenRecords(lines: AsyncIterable<Line>, source: string, split: WordSplitter, seg: Segmenter, w: LineWriter, entry: HistoryEntry): Promise<void> {
  let first = true
  for await (const {text, no} of lines) {
    if (text.trim() === '') continue
    const rec = parseObject(text, source, no)
    if (first && rec.span === 'header') {
      const h = parseHeader({value: rec, line: no}, source)
      checkKind(h, ['tokens'], source, no)
      await w.record(nextHeader(h, 'tokens', entry))
      first = false
      continue
    }
    if (first) await w.record(nextHeader(null, 'tokens', entry))
    first = false
    await w.record({...rec, spans: recordSpans(rec, source, no, split, seg)})
  }
}

function recordSpans(rec: Record<string, unknown>, source: string, no: number, split: WordSplitter, seg: Segmenter): [number, number][] {
  const tokens = rec.tokens
  if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === 'string')) {
    throw errorAt(source, no, 'a token record needs "tokens", an array of strings (span tokenize --tokens)')
  }
  const {words, firstToken} = tokenWords(tokens as string[], split)
  return tokenSpans(seg(words), firstToken, tokens.length)
}

/** Whether a stream is token records: its first non-blank line is a span header or has "tokens". */
export function looksLikeRecords(firstLine: string): boolean {
  if (!firstLine.trimStart().startsWith('{')) return false
  try {
    const v = JSON.parse(firstLine) as Record<string, unknown> | null
    return v !== null && typeof v === 'object' && (v.span === 'header' || Array.isArray(v.tokens))
  } catch {
    return false
  }
}

/** Raw text as --binary says, or JSONL (--field) whose records are at most --max-line-mb. */
export function inputLines(src: Source, field: string | undefined, binary: BinaryMode): AsyncGenerator<Line> {
  return field === undefined ? readLines(src, binary) : readLines(src, 'refuse', maxLineBytes())
}

/** Looks at the first non-blank line to tell token records from text, without losing it. */
export async function peek(lines: AsyncGenerator<Line>, detect: boolean): Promise<{lines: AsyncIterable<Line>; records: boolean}> {
  if (!detect) return {lines, records: false}
  const held: Line[] = []
  let r = await lines.next()
  while (!r.done && r.value.text.trim() === '') {
    held.push(r.value)
    r = await lines.next()
  }
  if (!r.done) held.push(r.value)
  const records = !r.done && looksLikeRecords(r.value.text)
  async function* all(): AsyncGenerator<Line> {
    yield* held
    yield* lines
  }
  return {lines: all(), records}
}
