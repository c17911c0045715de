/**
 * The minimum-cost assignment of rows to columns (Kuhn 1955, Munkres 1957), exact, in O(n²m) by
 * shortest augmenting paths with potentials (the Jonker-Volgenant form of the Hungarian
 * method). CEAF calls it per connected component of the chains' overlap graph, so its matrices
 * stay small even where a document has hundreds of chains.
 */

interface State {
  u: Float64Array
  v: Float64Array
  /** p[j]: the row (1-based) column j holds, 0 for none */
  p: Int32Array
  way: Int32Array
}

/** Adds row i (1-based) to the matching along a shortest augmenting path. */
function augment(cost: readonly (readonly number[])[], i: number, m: number, {u, v, p, way}: State): void {
  p[0] = i
  let j0 = 0
  const minv = new Float64Array(m + 1).fill(Infinity)
  const used = new Uint8Array(m + 1)
  do {
    used[j0] = 1
    const i0 = p[j0] as number
    const row = cost[i0 - 1] as number[]
    let delta = Infinity
    let j1 = 0
    for (let j = 1; j <= m; j++) {
      if (used[j]) continue
      const cur = (row[j - 1] as number) - (u[i0] as number) - (v[j] as number)
      if (cur < (minv[j] as number)) [minv[j], way[j]] = [cur, j0]
      if ((minv[j] as number) < delta) [delta, j1] = [minv[j] as number, j]
    }
    for (let j = 0; j <= m; j++) {
      if (used[j]) {
        u[p[j] as number] += delta
        v[j] -= delta
      } else minv[j] -= delta
    }
    j0 = j1
  } while (p[j0] !== 0)
  do {
    const j1 = way[j0] as number
    p[j0] = p[j1] as number
    j0 = j1
  } while (j0 !== 0)
}

/** For each row of `cost` (n rows ≤ m columns, all rows the same length), its column. */
export function minCostAssignment(cost: readonly (readonly number[])[]): number[] {
  const n = cost.length
  const m = n === 0 ? 0 : (cost[0] as number[]).length
  if (m < n) throw new Error(`assignment needs at least as many columns as rows (${n} × ${m})`)
  const state: State = {u: new Float64Array(n + 1), v: new Float64Array(m + 1), p: new Int32Array(m + 1), way: new Int32Array(m + 1)}
  for (let i = 1; i <= n; i++) augment(cost, i, m, state)
  const out = new Array<number>(n).fill(-1)
  for (let j = 1; j <= m; j++) if ((state.p[j] as number) > 0) out[(state.p[j] as number) - 1] = j - 1
  return out
}
