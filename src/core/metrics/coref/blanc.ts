/**
 * BLANC (Recasens and Hovy 2011; Luo et al. 2014 for system mentions) as CorScorer.pm's
 * BLANC_Internal and ScoreBLANC compute it: coreference links are the sets of id pairs "a-b"
 * (a ≤ b) within a chain, non-coreference links the pairs across two chains, for the key and for
 * the response; per document it counts each set and the key ∩ response intersections, summed
 * over documents. Where every id occurs once per side, the counts come in closed form from the
 * chain overlaps; otherwise (a span repeated in the key, or an invented response span repeated)
 * the pair sets are built as the scorer builds them.
 */

/** Per document or summed: coreference (c) and non-coreference (n) links, correct/key/response. */
export interface BlancCounts {
  cCorrect: number
  cKey: number
  cResponse: number
  nCorrect: number
  nKey: number
  nResponse: number
}

const pairs = (n: number) => (n * (n - 1)) / 2

/** The scorer's link sets, built explicitly. */
function linkSets(chains: readonly number[][]): {c: Set<string>; n: Set<string>} {
  const link = (a: number, b: number) => (a <= b ? `${a}-${b}` : `${b}-${a}`)
  const c = new Set<string>()
  const n = new Set<string>()
  for (const chain of chains)
    for (let p = 0; p < chain.length; p++) for (let q = p + 1; q < chain.length; q++) c.add(link(chain[p] as number, chain[q] as number))
  for (let i = 0; i < chains.length; i++)
    for (let j = i + 1; j < chains.length; j++) for (const a of chains[i] as number[]) for (const b of chains[j] as number[]) n.add(link(a, b))
  return {c, n}
}

export function blancBySets(key: readonly number[][], response: readonly number[][]): BlancCounts {
  const k = linkSets(key)
  const r = linkSets(response)
  const common = (a: Set<string>, b: Set<string>) => [...a].filter((x) => b.has(x)).length
  return {cCorrect: common(k.c, r.c), cKey: k.c.size, cResponse: r.c.size, nCorrect: common(k.n, r.n), nKey: k.n.size, nResponse: r.n.size}
}

/** Every id once per side: counts from chain sizes and overlaps. */
function blancByCounts(key: readonly number[][], response: readonly number[][], keyOf: Map<number, number>): BlancCounts {
  const cell = new Map<string, number>() // "i j" → |K_i ∩ R_j|
  const perKey = new Map<number, number>()
  const perResponse = new Map<number, number>()
  let common = 0
  response.forEach((chain, j) => {
    for (const m of chain) {
      const i = keyOf.get(m)
      if (i === undefined) continue
      common++
      cell.set(`${i} ${j}`, (cell.get(`${i} ${j}`) ?? 0) + 1)
      perKey.set(i, (perKey.get(i) ?? 0) + 1)
      perResponse.set(j, (perResponse.get(j) ?? 0) + 1)
    }
  })
  const sumPairs = (xs: Iterable<number>) => [...xs].reduce((s, x) => s + pairs(x), 0)
  const both = sumPairs(cell.values())
  const nK = key.reduce((s, c) => s + c.length, 0)
  const nR = response.reduce((s, c) => s + c.length, 0)
  const cKey = sumPairs(key.map((c) => c.length))
  const cResponse = sumPairs(response.map((c) => c.length))
  const nCorrect = pairs(common) - sumPairs(perKey.values()) - sumPairs(perResponse.values()) + both
  return {cCorrect: both, cKey, cResponse, nCorrect, nKey: pairs(nK) - cKey, nResponse: pairs(nR) - cResponse}
}

/** Each id → its chain, or null when some id occurs twice. */
function uniqueIndex(chains: readonly number[][]): Map<number, number> | null {
  const index = new Map<number, number>()
  for (let i = 0; i < chains.length; i++) {
    for (const m of chains[i] as number[]) {
      if (index.has(m)) return null
      index.set(m, i)
    }
  }
  return index
}

/** BLANC_Internal for one document. */
export function blancCounts(key: readonly number[][], response: readonly number[][]): BlancCounts {
  const keyOf = uniqueIndex(key)
  if (keyOf === null || uniqueIndex(response) === null) return blancBySets(key, response)
  return blancByCounts(key, response, keyOf)
}

/** ScoreBLANC's totals: recall, precision, F1 as fractions (the mean of the two kinds, or the one kind the key has). */
export function blancScore(t: BlancCounts): {recall: number; precision: number; f1: number} {
  const ra = t.cKey ? t.cCorrect / t.cKey : -1
  const rr = t.nKey ? t.nCorrect / t.nKey : -1
  const pa = t.cResponse ? t.cCorrect / t.cResponse : 0
  const pr = t.nResponse ? t.nCorrect / t.nResponse : 0
  const fa = pa + ra ? (2 * pa * ra) / (pa + ra) : 0
  const fr = pr + rr ? (2 * pr * rr) / (pr + rr) : 0
  if (ra === -1 && rr === -1) return {recall: 0, precision: 0, f1: 0}
  if (ra === -1) return {recall: rr, precision: pr, f1: fr}
  if (rr === -1) return {recall: ra, precision: pa, f1: fa}
  return {recall: (ra + rr) / 2, precision: (pa + pr) / 2, f1: (fa + fr) / 2}
}
