// A deterministic perturbation of gold coreference (issue 23): what tools/make-coref-goldens.ts
// hands the official scorer and what test/core/metrics/coref-real.test.ts rebuilds to score the
// same response with span. Per mention (seeded xoshiro128**, src/core/util/rng.ts): 10% dropped,
// 10% a boundary moved by one word, 5% moved into the previous cluster (merges); 10% of clusters
// split in two; spurious spans (5% of the mentions, 1-3 words) added as singletons or to a
// cluster. No span is written twice, so the scorer's repeated-mention rule never fires.
import {type ConllDoc, writeConll} from '../src/core/tasks/coref/conll.js'
import {Rng} from '../src/core/util/rng.js'

type Span = [number, number]

/** The seed of the perturbed LitBank and OntoGUM responses in fixtures/coref/golden-scorer.json. */
export const PERTURB_SEED = 23

function moved([s, e]: Span, words: number, rng: Rng): Span {
  const r = rng.int(4)
  if (r === 0 && s > 0) return [s - 1, e]
  if (r === 1 && s < e) return [s + 1, e]
  if (r === 2 && e + 1 < words) return [s, e + 1]
  return s < e ? [s, e - 1] : [s, e]
}

/** One document's clusters, perturbed. */
export function perturbClusters(clusters: readonly (readonly Span[])[], words: number, rng: Rng): Span[][] {
  const out: Span[][] = []
  const taken = new Set<string>()
  const add = (c: Span[], m: Span) => {
    const k = `${m[0]},${m[1]}`
    if (taken.has(k)) return
    taken.add(k)
    c.push(m)
  }
  for (const cluster of clusters) {
    const main: Span[] = []
    const other: Span[] = []
    const split = rng.float() < 0.1
    for (const m of cluster) {
      const r = rng.float()
      if (r < 0.1) continue
      const span = r < 0.2 ? moved([m[0], m[1]], words, rng) : ([m[0], m[1]] as Span)
      const into = r >= 0.2 && r < 0.25 && out.length > 0 ? (out[out.length - 1] as Span[]) : split && rng.float() < 0.5 ? other : main
      add(into, span)
    }
    for (const c of [main, other]) if (c.length > 0) out.push(c)
  }
  const spurious = Math.round(0.05 * clusters.reduce((n, c) => n + c.length, 0))
  for (let k = 0; k < spurious && words > 0; k++) {
    const s = rng.int(words)
    const span: Span = [s, Math.min(words - 1, s + rng.int(3))]
    if (rng.float() < 0.5 || out.length === 0) {
      const c: Span[] = []
      add(c, span)
      if (c.length > 0) out.push(c)
    } else add(out[rng.int(out.length)] as Span[], span)
  }
  return out.filter((c) => c.length > 0)
}

/** Every document perturbed with one generator seeded by `seed`, written as one CoNLL-2012 stream. */
export function perturbedResponse(docs: readonly ConllDoc[], seed: number): string {
  const rng = new Rng(seed)
  return docs.map((d) => writeConll(d, perturbClusters(d.clusters, d.words.length, rng))).join('')
}
