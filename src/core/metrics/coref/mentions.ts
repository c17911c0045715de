/**
 * Mention identification as the official scorer does it (reference-coreference-scorers v8.01
 * @f49f3f8a, lib/CorScorer.pm, IdentifMentions): every key mention gets an id in key order (a
 * mention repeated in the key gets a new id each time, and every copy then carries the last);
 * a response mention already seen in the response and also in the key is dropped as repeated
 * (a repeated mention absent from the key is not caught: both copies keep one id), chains left
 * empty are dropped, and response mentions not in the key get fresh ids. Counts: key mentions
 * and response mentions are distinct spans, `exact` the distinct response spans in the key.
 */

/** A mention: first and last word, inclusive. */
export type Span = readonly [number, number]

/** One document's chains as mention ids, and its identification counts. */
export interface DocChains {
  /** key chains (kChainsOrig) */
  key: number[][]
  /** response chains after repeated mentions are dropped (rChainsOrig) */
  response: number[][]
  keyMentions: number
  responseMentions: number
  exact: number
  /** response mentions dropped as repeated */
  repeated: number
  /** the scorer's "Repeated mention in the key/response" lines (it prints them whatever its verbosity) */
  notes: string[]
}

const spanKey = (m: Span) => `${m[0]},${m[1]}`

/** The response with repeated key-matched mentions dropped; fills `map` and counts. */
function dropRepeated(response: readonly (readonly Span[])[], id: Map<string, number>, map: Map<string, number>, notes: string[]) {
  let exact = 0
  let repeated = 0
  const kept: Span[][] = []
  for (const chain of response) {
    const out: Span[] = []
    for (const m of chain) {
      const k = spanKey(m)
      if (map.has(k)) {
        notes.push(`Repeated mention in the response: ${m[0]}, ${m[1]} ${map.get(k)}${id.get(k) ?? ''}`)
        repeated++
        continue
      }
      const i = id.get(k)
      if (i !== undefined) {
        map.set(k, i)
        exact++
      }
      out.push(m)
    }
    if (out.length > 0) kept.push(out)
  }
  return {kept, exact, repeated}
}

/** IdentifMentions for one document. */
export function identifyMentions(key: readonly (readonly Span[])[], response: readonly (readonly Span[])[]): DocChains {
  const id = new Map<string, number>()
  let next = 0
  const notes: string[] = []
  for (const chain of key) {
    for (const m of chain) {
      const k = spanKey(m)
      if (id.has(k)) notes.push(`Repeated mention in the key: ${m[0]}, ${m[1]} ${id.get(k)}${next}`)
      id.set(k, next++)
    }
  }
  const map = new Map<string, number>()
  const {kept, exact, repeated} = dropRepeated(response, id, map, notes)
  for (const chain of kept) for (const m of chain) if (!map.has(spanKey(m))) map.set(spanKey(m), next++)
  return {
    key: key.map((chain) => chain.map((m) => id.get(spanKey(m)) as number)),
    response: kept.map((chain) => chain.map((m) => map.get(spanKey(m)) as number)),
    keyMentions: id.size,
    responseMentions: map.size,
    exact,
    repeated,
    notes,
  }
}

/** Where each id last occurs among the chains (CorScorer.pm's Indexa). */
export function chainIndex(chains: readonly number[][]): Map<number, number> {
  const index = new Map<number, number>()
  chains.forEach((chain, i) => {
    for (const m of chain) index.set(m, i)
  })
  return index
}
