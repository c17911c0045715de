import {shownValue} from '../util/json-value.js'

/**
 * Tags over a record's ids (docs/formats.md#tags): `[start, end, label]`, positions index `ids`,
 * ends inclusive, sorted or not on input, never overlapping. Made by `span tag` or any tagger.
 */
export type Tag = [number, number, string]

type Bad = (msg: string) => Error

/**
 * Checks a record's `tags` (absent or null: no tags): each [start, end, label] with integer
 * positions in [0, n), start ≤ end, a non-empty string label, no two tags sharing a position.
 * Returns them sorted by start.
 */
export function parseTags(raw: unknown, n: number, bad: Bad): Tag[] {
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) throw bad('field "tags" must be an array of [start, end, "LABEL"] triples')
  const tags = raw.map((t: unknown, i) => checkTag(t, i, n, bad))
  const order = tags.map((_, i) => i).sort((a, b) => tags[a][0] - tags[b][0])
  for (let k = 1; k < order.length; k++) {
    const [a, b] = [order[k - 1], order[k]]
    if (tags[b][0] <= tags[a][1]) throw bad(`tags[${b}] [${tags[b][0]}, ${tags[b][1]}] overlaps tags[${a}] [${tags[a][0]}, ${tags[a][1]}]`)
  }
  return order.map((i) => tags[i])
}

function checkTag(t: unknown, i: number, n: number, bad: Bad): Tag {
  if (!Array.isArray(t) || t.length !== 3) throw bad(`tags[${i}] must be a [start, end, "LABEL"] triple (ends inclusive)`)
  for (const k of [0, 1]) {
    const v = t[k] as unknown
    if (!Number.isInteger(v) || (v as number) < 0) throw bad(`tags[${i}][${k}] = ${shownValue(v)} is not a position (an integer ≥ 0)`)
    if ((v as number) >= n) throw bad(`tags[${i}][${k}] = ${String(v)} is past the record (${n} ids; ends are inclusive)`)
  }
  if (t[1] < t[0]) throw bad(`tags[${i}] ends (${t[1]}) before it starts (${t[0]})`)
  if (typeof t[2] !== 'string' || t[2] === '') throw bad(`tags[${i}][2] = ${shownValue(t[2])}: the label must be a non-empty string`)
  return [t[0], t[1], t[2]]
}

/** Tags as the NDJSON value `[[s,e,"L"],…]` (JSON.stringify's spelling). */
export function tagsJson(tags: readonly Tag[]): string {
  return JSON.stringify(tags)
}
