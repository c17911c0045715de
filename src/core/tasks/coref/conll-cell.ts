/**
 * One coreference cell of a CoNLL-2012 line, read exactly as the official scorer reads it
 * (conll/reference-coreference-scorers v8.01 @f49f3f8a, lib/CorScorer.pm, GetCoreference):
 * unless the cell is `_`, it removes `(N+D)` items ("double antecedents", ignored), then one
 * `(N)` at a time (one-word mentions), then one `(N` at a time (openings), then one `N)` at a
 * time (closings), each time the leftmost match, so separators (`|`) are optional and anything
 * else in the cell is ignored. Ids are digit strings compared as strings (`07` is not `7`).
 * The writer's order (closings, openings, one-word mentions) keeps cells without separators
 * unambiguous: `4)(3` reads back as a closing and an opening, where `(34)` would not.
 */

export interface CellItems {
  /** ids of one-word mentions, in the scorer's reading order */
  singles: string[]
  /** ids of openings */
  opens: string[]
  /** ids of closings */
  closes: string[]
}

const NONE: CellItems = {singles: [], opens: [], closes: []}
const DOUBLE = /\(([0-9]+\+[0-9])\)/
const SINGLE = /\(([0-9]+)\)/
const OPEN = /\(([0-9]+)/
const CLOSE = /([0-9]+)\)/

/** Perl's `while ($s =~ s/RE//) { push @ids, $1 }`: the leftmost match removed, again and again. */
function drain(s: string, re: RegExp, ids: string[] | null): string {
  for (;;) {
    const m = re.exec(s)
    if (m === null) return s
    ids?.push(m[1] as string)
    s = s.slice(0, m.index) + s.slice(m.index + m[0].length)
  }
}

/** The mentions a cell opens, closes or holds, as CorScorer.pm reads them. */
export function parseCell(cell: string): CellItems {
  if (cell === '_' || (!cell.includes('(') && !cell.includes(')'))) return NONE
  const items: CellItems = {singles: [], opens: [], closes: []}
  let s = drain(cell, DOUBLE, null)
  s = drain(s, SINGLE, items.singles)
  s = drain(s, OPEN, items.opens)
  drain(s, CLOSE, items.closes)
  return items
}

/** Per word, the brackets of `clusters` (ids = cluster indices); a word with none gets `none`. */
export function encodeCells(words: number, clusters: readonly (readonly [number, number])[][], sep: string, none: string): string[] {
  const closes: [number, number][][] = Array.from({length: words}, () => []) // per word: [start, id]
  const opens: [number, number][][] = Array.from({length: words}, () => []) // per word: [end, id]
  const singles: number[][] = Array.from({length: words}, () => [])
  clusters.forEach((mentions, id) => {
    for (const [s, e] of mentions) {
      if (!(Number.isInteger(s) && Number.isInteger(e) && s >= 0 && s <= e && e < words))
        throw new Error(`mention [${s}, ${e}] outside the document's ${words} words`)
      if (s === e) (singles[s] as number[]).push(id)
      else {
        ;(opens[s] as [number, number][]).push([e, id])
        ;(closes[e] as [number, number][]).push([s, id])
      }
    }
  })
  // inner mentions close first (later start), outer ones open first (later end); ties by id
  const byFirstDesc = (a: [number, number], b: [number, number]) => b[0] - a[0] || a[1] - b[1]
  return Array.from({length: words}, (_, w) => {
    const parts = [
      ...(closes[w] as [number, number][]).sort(byFirstDesc).map(([, id]) => `${id})`),
      ...(opens[w] as [number, number][]).sort(byFirstDesc).map(([, id]) => `(${id}`),
      ...(singles[w] as number[]).sort((a, b) => a - b).map((id) => `(${id})`),
    ]
    return parts.length === 0 ? none : parts.join(sep)
  })
}
