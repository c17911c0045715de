import {errorAt} from './errors.js'
import {readLines, type Source} from './lines.js'

export interface Rec {
  value: Record<string, unknown>
  line: number
}

/** JSON objects, one per line; blank lines are skipped; anything else is an error at its line. */
export async function* readNdjson(src: Source): AsyncGenerator<Rec> {
  for await (const {text, no} of readLines(src)) {
    if (text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (err) {
      throw errorAt(src.name, no, `invalid JSON: ${(err as Error).message}`)
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw errorAt(src.name, no, 'expected a JSON object')
    }
    yield {value: value as Record<string, unknown>, line: no}
  }
}
