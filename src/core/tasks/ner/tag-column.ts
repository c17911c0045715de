/**
 * Which column of a CoNLL file holds the tags a token classifier learns (`--tag-column`) and which
 * chunk types of it count (`--tag-types`; the others read as O). CoNLL-2003's layout is
 * `token POS chunk NER`: `ner` (the default) is the last column, `chunk` the third, whose
 * B-NP/I-NP chunks train the noun-phrase chunker of `span tag` (docs/algorithms.md#tagged-masking).
 */
import {UsageError} from '../../util/errors.js'

export interface TagColumn {
  index: number | 'last' // 0-based field index, or the last field of each line
  types: ReadonlySet<string> | null // chunk types kept; null: every type
}

/** The last column, every type: what a CoNLL reader takes by default. */
export const LAST_COLUMN: TagColumn = {index: 'last', types: null}

/** CoNLL-2003's column names (1-based numbers as the task's README counts them). */
const NAMES: Record<string, number | 'last'> = {ner: 'last', last: 'last', pos: 1, chunk: 2}

/** `--tag-column` (a name, or a 1-based column number other than the token's) and `--tag-types` (comma-separated), as given. */
export function parseTagColumn(column: string | undefined, types: string | undefined): TagColumn {
  const c = (column ?? 'ner').trim().toLowerCase()
  let index = NAMES[c]
  if (index === undefined) {
    if (!/^\d+$/.test(c) || Number(c) < 2)
      throw new UsageError(`--tag-column must be ner, chunk, pos, last or a column number from 2 (1 is the token), got ${JSON.stringify(column)}`)
    index = Number(c) - 1
  }
  if (types === undefined) return {index, types: null}
  const list = types
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
  if (list.length === 0 || list.some((t) => /\s/.test(t) || /^[BI]-/.test(t)))
    throw new UsageError(`--tag-types must be comma-separated chunk types such as NP or PER,LOC, got ${JSON.stringify(types)}`)
  return {index, types: new Set(list)}
}

/** The column a line of `width` fields reads its tag from (0-based), or -1 when it has no such column. */
export function tagIndex(c: TagColumn, width: number): number {
  const i = c.index === 'last' ? width - 1 : c.index
  return i >= 1 && i < width ? i : -1
}

/** A tag as the classifier sees it: a type not in --tag-types reads as O. */
export function keptTag(c: TagColumn, tag: string): string {
  return c.types === null || tag === 'O' || c.types.has(tag.slice(2)) ? tag : 'O'
}

/** Words for messages: "column 3 (chunk)" or "the last column". */
export function describeColumn(c: TagColumn): string {
  if (c.index === 'last') return 'the last column'
  const name = Object.entries(NAMES).find(([, v]) => v === c.index)?.[0]
  return `column ${c.index + 1}${name ? ` (${name})` : ''}`
}
