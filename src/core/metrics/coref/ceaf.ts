/**
 * CEAF (Luo 2005) as CorScorer.pm's CEAF computes it: the one-to-one alignment of key chains to
 * response chains that maximises the summed similarity, φ4 = 2|K∩R|/(|K|+|R|) (entity-based,
 * CEAFe) or φ3 = |K∩R| (mention-based, CEAFm), |K∩R| counting K's mentions found in R. The
 * scorer minimises 1 − φ with Algorithm::Munkres and adds 1 − (1 − φ) per key chain in key order;
 * so does this. Chains that share no mention have φ = 0, so the alignment is solved separately
 * on each connected component of the overlap graph (exact: the total decomposes). Denominators:
 * CEAFe the number of key (recall) and response (precision) chains, CEAFm their mentions.
 */
import {minCostAssignment} from './assignment.js'
import type {RPCounts} from './counts.js'

/** |K_i ∩ R_j| for every overlapping pair: per key chain, response chain → count. */
function intersections(key: readonly number[][], response: readonly number[][]): Map<number, number>[] {
  const inResponse = new Map<number, number[]>() // id → response chains holding it (each once)
  response.forEach((chain, j) => {
    for (const m of new Set(chain)) {
      const list = inResponse.get(m)
      if (list === undefined) inResponse.set(m, [j])
      else list.push(j)
    }
  })
  return key.map((chain) => {
    const row = new Map<number, number>()
    for (const m of chain) for (const j of inResponse.get(m) ?? []) row.set(j, (row.get(j) ?? 0) + 1)
    return row
  })
}

/** Connected components of the overlap graph that hold chains of both sides: [key rows, response columns]. */
function components(inter: readonly Map<number, number>[], nKey: number, nResponse: number): [number[], number[]][] {
  const parent = Array.from({length: nKey + nResponse}, (_, i) => i)
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x] as number] as number
    return x
  }
  inter.forEach((row, i) => row.forEach((_, j) => void (parent[find(i)] = find(nKey + j))))
  const groups = new Map<number, [number[], number[]]>()
  for (let x = 0; x < parent.length; x++) {
    const root = find(x)
    let g = groups.get(root)
    if (g === undefined) groups.set(root, (g = [[], []]))
    if (x < nKey) g[0].push(x)
    else g[1].push(x - nKey)
  }
  return [...groups.values()].filter(([rows, cols]) => rows.length > 0 && cols.length > 0)
}

/**
 * The [row, column] pairs of a minimum-cost one-to-one assignment of the smaller side. Rows or
 * columns left over are the scorer's padding (cost 1, φ = 0), which adds nothing.
 */
function bestPairs(cost: number[][]): [number, number][] {
  const rows = cost.length
  const cols = (cost[0] as number[]).length
  if (rows <= cols) return minCostAssignment(cost).map((c, r) => [r, c])
  const transposed = Array.from({length: cols}, (_, c) => cost.map((row) => row[c] as number))
  return minCostAssignment(transposed).map((r, c) => [r, c])
}

/** CEAF for one document: entity-based (φ4) or mention-based (φ3). */
export function ceaf(key: readonly number[][], response: readonly number[][], type: 'entity' | 'mention'): RPCounts {
  const inter = intersections(key, response)
  const phi = (i: number, j: number) => {
    const n = inter[i]?.get(j) ?? 0
    return type === 'mention' ? n : (2 * n) / ((key[i] as number[]).length + (response[j] as number[]).length)
  }
  const gained = new Array<number>(key.length).fill(0) // per key chain: 1 − sim of its assigned column
  for (const [rows, cols] of components(inter, key.length, response.length)) {
    const sim = rows.map((i) => cols.map((j) => 1 - phi(i, j))) // the scorer's 1 − φ
    for (const [r, c] of bestPairs(sim)) gained[rows[r] as number] = 1 - (sim[r] as number[])[c]!
  }
  const numerator = gained.reduce((s, g) => s + g, 0)
  const den = (chains: readonly number[][]) => (type === 'entity' ? chains.filter((c) => c.length > 0).length : chains.reduce((n, c) => n + c.length, 0))
  return {recallNum: numerator, recallDen: den(key), precisionNum: numerator, precisionDen: den(response)}
}
