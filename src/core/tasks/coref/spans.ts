/**
 * Candidate spans, their gold labels and pruning, on the host (Joshi et al. 2019;
 * mandarjoshi90/coref @bd04f2e1, independent.py get_predictions_and_loss, truncate_example,
 * bucket_distance, coarse_to_fine_pruning; coref_kernels.cc ExtractSpans). Spans are
 * [first, last] sub-tokens of a CorefDoc (docs/algorithms.md#coreference).
 */
import type {CorefDoc} from './segments.js'

/** The segments [a, a + m) of a document as a document of their own (training on a random run: truncate_example). */
export function windowOf(d: CorefDoc, a: number, m: number): CorefDoc {
  const b = Math.min(a + m, d.segments.length)
  const lo = d.segStart[a]
  const hi = b < d.segments.length ? d.segStart[b] : d.wordOf.length
  const inside = ([s, e]: [number, number]) => s >= lo && e < hi
  return {
    key: d.key,
    segments: d.segments.slice(a, b),
    segStart: d.segStart.slice(a, b).map((s) => s - lo),
    wordOf: d.wordOf.subarray(lo, hi),
    sentenceOf: d.sentenceOf.subarray(lo, hi),
    segmentOf: d.segmentOf.subarray(lo, hi).map((s) => s - a),
    wordStart: d.wordStart.subarray(lo, hi),
    wordEnd: d.wordEnd.subarray(lo, hi),
    speakerOf: d.speakerOf.subarray(lo, hi),
    genre: d.genre,
    clusters: d.clusters.map((c) => c.filter(inside).map(([s, e]): [number, number] => [s - lo, e - lo])).filter((c) => c.length > 0),
  }
}

export interface Candidates {
  starts: Int32Array // [K]
  ends: Int32Array // [K]
  /** gold cluster id + 1 of each candidate (0: not a gold mention) */
  cluster: Int32Array // [K]
}

/**
 * Every span of at most maxWidth sub-tokens inside one sentence that starts at a word's first
 * sub-token and ends at a word's last (independent.py's candidate mask, plus word boundaries),
 * ordered by start, then end.
 */
export function candidateSpans(d: CorefDoc, maxWidth: number): Candidates {
  const n = d.wordOf.length
  const starts: number[] = []
  const ends: number[] = []
  for (let s = 0; s < n; s++) {
    if (!d.wordStart[s]) continue
    for (let e = s; e < Math.min(s + maxWidth, n) && d.sentenceOf[e] === d.sentenceOf[s]; e++) {
      if (!d.wordEnd[e]) continue
      starts.push(s)
      ends.push(e)
    }
  }
  const gold = new Map<string, number>()
  d.clusters.forEach((c, k) => c.forEach(([s, e]) => gold.set(`${s},${e}`, k + 1)))
  const cluster = Int32Array.from(starts, (s, i) => gold.get(`${s},${ends[i]}`) ?? 0)
  return {starts: Int32Array.from(starts), ends: Int32Array.from(ends), cluster}
}

/**
 * ExtractSpans (coref_kernels.cc) with sort_spans: candidates by descending score (ties: lower
 * index first), each kept unless it crosses one already kept (overlapping without nesting), until
 * k are kept; the kept ones sorted by start, then end. Returns candidate indices (at most k).
 */
export function extractSpans(scores: ArrayLike<number>, starts: ArrayLike<number>, ends: ArrayLike<number>, k: number): number[] {
  const order = Array.from({length: scores.length}, (_, i) => i).sort((a, b) => scores[b] - scores[a] || a - b)
  const latestEnd = new Map<number, number>() // start → latest end kept
  const earliestStart = new Map<number, number>() // end → earliest start kept
  const kept: number[] = []
  for (const i of order) {
    if (kept.length >= k) break
    const s = starts[i]
    const e = ends[i]
    let crossing = false
    for (let j = s; j <= e && !crossing; j++) {
      const le = latestEnd.get(j)
      const es = earliestStart.get(j)
      crossing = (le !== undefined && j > s && le > e) || (es !== undefined && j < e && es < s)
    }
    if (crossing) continue
    kept.push(i)
    if ((latestEnd.get(s) ?? -1) < e) latestEnd.set(s, e)
    if ((earliestStart.get(e) ?? Infinity) > s) earliestStart.set(e, s)
  }
  return kept.sort((a, b) => starts[a] - starts[b] || ends[a] - ends[b] || a - b)
}

/** bucket_distance: 10 semi-log buckets [0, 1, 2, 3, 4, 5-7, 8-15, 16-31, 32-63, 64+]. */
export function bucketDistance(d: number): number {
  if (d <= 4) return Math.max(d, 0)
  return Math.min(Math.floor(Math.log2(d)) + 3, 9)
}

/** The top c antecedents of each of k spans by coarse score, among the earlier spans. */
export interface Antecedents {
  c: number
  index: Int32Array // [k, c] antecedent span indices (0 where masked)
  mask: Uint8Array // [k, c] 1: a real antecedent (j < i)
}

/**
 * coarse_to_fine_pruning's top-c on the host: for each span i, the earlier spans j < i with the
 * highest coarse score (ties: the nearer first); rows with fewer than c earlier spans are padded
 * with masked entries. fast: [k, k] row-major; only j < i is read.
 */
export function topAntecedents(fast: ArrayLike<number>, k: number, c: number): Antecedents {
  const ant = {c, index: new Int32Array(k * c), mask: new Uint8Array(k * c)}
  topAntecedentRows(fast, k, 0, k, ant)
  return ant
}

/** topAntecedents of the rows a..a+n into `ant` ([k, c]), fast holding those rows only: [n, k] row-major. */
export function topAntecedentRows(fast: ArrayLike<number>, k: number, a: number, n: number, ant: Antecedents): void {
  const {c, index, mask} = ant
  const best = new Float64Array(c)
  for (let i = a; i < a + n; i++) {
    const row = (i - a) * k
    const at = index.subarray(i * c, (i + 1) * c)
    if (i <= c)
      for (let t = 0; t < i; t++) at[t] = i - 1 - t // all earlier spans, nearest first
    else topC(fast, row, i, c, at, best)
    mask.fill(1, i * c, i * c + Math.min(i, c))
  }
}

/**
 * The c spans j < i of highest score fast[row + j] into `at`, best first, ties to the nearer: the
 * order of sorting all i of them (nearest first, by descending score, stably) without the sort.
 */
function topC(fast: ArrayLike<number>, row: number, i: number, c: number, at: Int32Array, best: Float64Array): void {
  let m = 0
  for (let j = i - 1; j >= 0; j--) {
    const s = fast[row + j]
    if (m === c && !(s > best[c - 1])) continue // a nearer one kept wins a tie
    let p = m < c ? m++ : c - 1
    for (; p > 0 && s > best[p - 1]; p--) {
      best[p] = best[p - 1]
      at[p] = at[p - 1]
    }
    best[p] = s
    at[p] = j
  }
}
