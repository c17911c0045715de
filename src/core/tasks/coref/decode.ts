/**
 * Clusters from antecedent scores (Joshi et al. 2019; mandarjoshi90/coref @bd04f2e1,
 * independent.py get_predicted_antecedents and get_predicted_clusters): each top span, left to
 * right, links to its best-scoring antecedent unless the dummy (score 0) wins; links build
 * clusters. With singletons on, a span left alone whose mention score is above 0 is a cluster of
 * its own (fast-coref's rule). docs/algorithms.md#coreference.
 */
import type {Antecedents} from './spans.js'

export interface TopSpans {
  starts: ArrayLike<number> // [k] sorted by start, then end
  ends: ArrayLike<number> // [k]
  mention: ArrayLike<number> // [k] mention scores
}

/** The predicted antecedent of each span (-1: the dummy). scores [k, c + 1] row-major, column 0 the dummy. */
export function predictedAntecedents(scores: ArrayLike<number>, ant: Antecedents, k: number): Int32Array {
  const {c} = ant
  const out = new Int32Array(k).fill(-1)
  for (let i = 0; i < k; i++) {
    let best = 0
    for (let t = 1; t <= c; t++) if (scores[i * (c + 1) + t] > scores[i * (c + 1) + best]) best = t
    if (best > 0 && ant.mask[i * c + best - 1]) out[i] = ant.index[i * c + best - 1]
  }
  return out
}

/** Clusters of [start, end] spans in order of first mention; with singletons, the lone spans scored above 0 too. */
export function predictedClusters(top: TopSpans, antecedent: Int32Array, singletons: boolean): [number, number][][] {
  const clusterOf = new Int32Array(antecedent.length).fill(-1)
  const clusters: number[][] = []
  antecedent.forEach((j, i) => {
    if (j < 0) return
    if (clusterOf[j] < 0) {
      clusterOf[j] = clusters.length
      clusters.push([j])
    }
    clusterOf[i] = clusterOf[j]
    clusters[clusterOf[j]].push(i)
  })
  if (singletons) antecedent.forEach((_, i) => clusterOf[i] < 0 && top.mention[i] > 0 && clusters.push([i]))
  return clusters.map((c) => c.map((i): [number, number] => [top.starts[i], top.ends[i]]))
}

/** Sub-token spans as word spans through the sub-token → word map; clusters sorted by first mention. */
export function toWords(clusters: [number, number][][], wordOf: ArrayLike<number>): [number, number][][] {
  const out = clusters.map((c) => c.map(([s, e]): [number, number] => [wordOf[s], wordOf[e]]).sort((a, b) => a[0] - b[0] || a[1] - b[1]))
  return out.sort((a, b) => a[0][0] - b[0][0] || a[0][1] - b[0][1])
}
