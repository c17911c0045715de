import {createReadStream} from 'node:fs'
import {stat} from 'node:fs/promises'
import type {Readable} from 'node:stream'
import split2 from 'split2'
import {SpanError, errorAt} from './errors.js'

/** A named input: `-` is stdin, anything else a file path. */
export interface Source {
  name: string // shown in errors: `stdin` or the path
  stream: Readable
}

export async function openSource(path: string): Promise<Source> {
  if (path === '-' || path === '') return {name: 'stdin', stream: process.stdin}
  try {
    const s = await stat(path)
    if (s.isDirectory()) throw new SpanError(`${path}: is a directory`)
  } catch (err) {
    if (err instanceof SpanError) throw err
    throw new SpanError(`${path}: no such file`)
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
 * The lines of a source, framed by split2 (which also drops a trailing `\r`), numbered from 1.
 * A NUL character means binary input: text tools must not guess at it.
 */
export async function* readLines(src: Source): AsyncGenerator<Line> {
  let no = 0
  const framed = src.stream.pipe(split2(/\r?\n/))
  src.stream.on('error', (err) => framed.destroy(err))
  for await (const text of framed as AsyncIterable<string>) {
    no++
    if (text.includes('\u0000')) throw errorAt(src.name, no, 'binary input (NUL byte); expected UTF-8 text')
    yield {text, no}
  }
}
