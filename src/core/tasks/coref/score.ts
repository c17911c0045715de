/**
 * Dev scores for `finetune coref`'s best/ selection: MUC, B³ and CEAFe F1 and their mean, the
 * CoNLL F1 (Pradhan et al. 2014; conll/reference-coreference-scorers v8.01), with mention
 * identification. An interim scorer until `span eval coref`'s (metrics/coref/) is merged: it
 * does not copy the official scorer's handling of repeated mentions.
 */
import type {DevScores} from '../../train/adapter.js'
import type {ConllDoc, Mention} from './conll.js'

type Clusters = Mention[][]
const key = ([s, e]: Mention) => `${s},${e}`

interface Counts {
  rn: number
  rd: number
  pn: number
  pd: number
}
const zero = (): Counts => ({rn: 0, rd: 0, pn: 0, pd: 0})
const f1 = (c: Counts) => {
  const r = c.rd ? c.rn / c.rd : 0
  const p = c.pd ? c.pn / c.pd : 0
  return r + p > 0 ? (2 * p * r) / (p + r) : 0
}

function clusterOf(cs: Clusters): Map<string, number> {
  const m = new Map<string, number>()
  cs.forEach((c, i) => c.forEach((x) => m.set(key(x), i)))
  return m
}

/** MUC (Vilain et al. 1995): Σ(|K| − |partitions of K by R|) / Σ(|K| − 1), both ways. */
function muc(k: Clusters, r: Clusters): [number, number] {
  const of = clusterOf(r)
  let num = 0
  let den = 0
  for (const c of k) {
    const parts = new Set(c.map((x) => of.get(key(x)) ?? `s${key(x)}`))
    num += c.length - parts.size
    den += c.length - 1
  }
  return [num, den]
}

/** B³ (Bagga and Baldwin 1998): Σ over mentions of |K ∩ R|/|K|, both ways. */
function bcub(k: Clusters, r: Clusters): [number, number] {
  const of = clusterOf(r)
  let num = 0
  let den = 0
  for (const c of k) {
    const counts = new Map<number, number>()
    for (const x of c) {
      const j = of.get(key(x))
      if (j !== undefined) counts.set(j, (counts.get(j) ?? 0) + 1)
    }
    for (const n of counts.values()) num += (n * n) / c.length
    den += c.length
  }
  return [num, den]
}

/** Potentials and matching of the Hungarian algorithm (e-maxx's O(n³) form, 1-based). */
interface Km {
  n: number
  cost: number[][]
  u: number[]
  v: number[]
  p: number[] // column → row matched
  way: number[]
}

/** One Dijkstra-like step from the columns in `used`: the slack update and the next column. */
function kmStep(k: Km, used: boolean[], minv: number[], j0: number): number {
  const i0 = k.p[j0]
  let delta = Infinity
  let j1 = 0
  for (let j = 1; j <= k.n; j++) {
    if (used[j]) continue
    const cur = k.cost[i0 - 1][j - 1] - k.u[i0] - k.v[j]
    if (cur < minv[j]) [minv[j], k.way[j]] = [cur, j0]
    if (minv[j] < delta) [delta, j1] = [minv[j], j]
  }
  for (let j = 0; j <= k.n; j++) {
    if (!used[j]) minv[j] -= delta
    else [k.u[k.p[j]], k.v[j]] = [k.u[k.p[j]] + delta, k.v[j] - delta]
  }
  return j1
}

/** The best one-to-one cluster alignment's total similarity (Hungarian algorithm, O(n³)). */
function bestAlignment(sim: number[][]): number {
  const n = Math.max(sim.length, sim[0]?.length ?? 0)
  const zeros = () => new Array<number>(n + 1).fill(0)
  const cost = Array.from({length: n}, (_, i) => Array.from({length: n}, (_, j) => -(sim[i]?.[j] ?? 0)))
  const k: Km = {n, cost, u: zeros(), v: zeros(), p: zeros(), way: zeros()}
  for (let i = 1; i <= n; i++) {
    k.p[0] = i
    let j0 = 0
    const minv = new Array<number>(n + 1).fill(Infinity)
    const used = new Array<boolean>(n + 1).fill(false)
    do {
      used[j0] = true
      j0 = kmStep(k, used, minv, j0)
    } while (k.p[j0] !== 0)
    do {
      const j1 = k.way[j0]
      k.p[j0] = k.p[j1]
      j0 = j1
    } while (j0)
  }
  let total = 0
  for (let j = 1; j <= n; j++) total += sim[k.p[j] - 1]?.[j - 1] ?? 0
  return total
}

/** CEAFe (Luo 2005): φ4(K, R) = 2|K ∩ R| / (|K| + |R|), aligned one to one; recall over |K|, precision over |R|. */
function ceafe(k: Clusters, r: Clusters): Counts {
  const sets = r.map((c) => new Set(c.map(key)))
  const sim = k.map((c) => sets.map((s) => (2 * c.filter((x) => s.has(key(x))).length) / (c.length + s.size)))
  const best = bestAlignment(sim)
  return {rn: best, rd: k.length, pn: best, pd: r.length}
}

/** Mention identification, MUC, B³, CEAFe and the CoNLL F1 over documents (0-100). */
export function corefDevScores(gold: ConllDoc[], predicted: Mention[][][]): DevScores {
  const c = {muc: zero(), bcub: zero(), ceafe: zero(), mentions: zero()}
  gold.forEach((g, i) => {
    const k = g.clusters
    const r = predicted[i] ?? []
    const add = (t: Counts, [rn, rd]: [number, number], [pn, pd]: [number, number]) =>
      Object.assign(t, {rn: t.rn + rn, rd: t.rd + rd, pn: t.pn + pn, pd: t.pd + pd})
    add(c.muc, muc(k, r), muc(r, k))
    add(c.bcub, bcub(k, r), bcub(r, k))
    const e = ceafe(k, r)
    add(c.ceafe, [e.rn, e.rd], [e.pn, e.pd])
    const gm = new Set(k.flat().map(key))
    const hit = r.flat().filter((x) => gm.has(key(x))).length
    add(c.mentions, [hit, gm.size], [hit, r.flat().length])
  })
  const pct = (x: number) => Math.round(x * 1e6) / 1e4
  const [m, b, e] = [f1(c.muc), f1(c.bcub), f1(c.ceafe)]
  return {muc_f1: pct(m), bcub_f1: pct(b), ceafe_f1: pct(e), mention_f1: pct(f1(c.mentions)), conll_f1: pct((m + b + e) / 3)}
}
