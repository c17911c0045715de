import {createReadStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import {readLineBatches, type BinaryMode} from './bytelines.js'
import {SpanError} from './errors.js'
import type {Source} from './source.js'
import {MAX_STRING_LENGTH, quote} from '../util/errors.js'

export type {Source} from './source.js'

export async function openSource(path: string): Promise<Source> {
  if (path === '-' || path === '') return {name: 'stdin', stream: process.stdin}
  try {
    const s = await stat(path)
    if (s.isDirectory()) throw new SpanError(`${quote(path)}: is a directory`)
  } catch (err) {
    if (err instanceof SpanError) throw err
    throw new SpanError(`${quote(path)}: no such file`)
  }
  const stream = createReadStream(path)
  stream.on('error', (err: Error & {path?: string}) => {
    err.path ??= path // a read error (EIO) names no path of its own; the command's one line should
  })
  return {name: path, stream}
}

export interface Line {
  text: string
  no: number // 1-based line number in the source
}

/**
 * The lines of a source, numbered from 1, framed as split2 on /\r?\n/ frames them (bytelines.ts:
 * a `\r` before `\n` dropped). `binary` says what a NUL byte means (BinaryMode): in record and
 * table files (`refuse`, the default) binary input; in raw text (`--binary`, detect by default)
 * a character BERT's _clean_text drops, unless the first 8 KB look binary. `maxLine` bounds a
 * line's bytes (--max-line-mb for JSONL, readLineBatches), and V8's longest string bounds it in any case.
 */
export async function* readLines(src: Source, binary: BinaryMode = 'refuse', maxLine = Infinity): AsyncGenerator<Line> {
  // each line becomes one string: never longer than a string can be
  for await (const b of readLineBatches(src, Math.min(maxLine, MAX_STRING_LENGTH), binary)) {
    for (let i = 0; i < b.count; i++) yield {text: b.buf.toString('utf8', b.start[i], b.end[i]), no: b.firstNo + i}
  }
}
