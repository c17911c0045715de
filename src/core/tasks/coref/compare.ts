/**
 * `span eval compare --task coref`. McNemar's test needs one right-or-wrong outcome per unit,
 * and a coreference document has none (its score is a set of link, mention and chain counts),
 * so systems are compared by paired approximate randomization over documents (Noreen 1989;
 * the test Berg-Kirkpatrick et al. 2012 describe for NLP metrics): each trial swaps A's and B's
 * predictions for each document with probability 1/2 (seeded xoshiro128**), re-sums the
 * official scorer's per-document counts and recomputes both corpus CoNLL F1 (mean of MUC, B³
 * and CEAFe F1, as span eval coref gives it); p = (1 + trials with |F1_A − F1_B| at least the
 * observed) / (1 + trials), two-sided.
 */
import {addCounts, type RPCounts, rpf, zeroCounts} from '../../metrics/coref/counts.js'
import {type CorefCounts, scoreCoref} from '../../metrics/coref/score.js'
import {Rng} from '../../util/rng.js'
import {formatP} from '../glue/report.js'
import {readConll} from './conll.js'

export interface CorefComparison {
  documents: number
  conllA: number
  conllB: number
  trials: number
  seed: number
  /** trials whose |difference| reached the observed one */
  atLeast: number
  pValue: number
}

const METRICS = ['muc', 'bcub', 'ceafe'] as const
type Triple = Record<(typeof METRICS)[number], RPCounts>

/** CoNLL F1 of summed per-document counts: side[d] picks A (0) or B (1) for document d. */
function conllOf(docs: readonly [Triple, Triple][], side: (d: number) => 0 | 1): number {
  const sum: Triple = {muc: zeroCounts(), bcub: zeroCounts(), ceafe: zeroCounts()}
  docs.forEach((pair, d) => {
    for (const m of METRICS) addCounts(sum[m], pair[side(d)][m])
  })
  return (rpf(sum.muc).f1 + rpf(sum.bcub).f1 + rpf(sum.ceafe).f1) / 3
}

const triple = (c: CorefCounts): Triple => ({muc: c.muc, bcub: c.bcub, ceafe: c.ceafe})

/** The randomization test on one gold set and two prediction files. */
export function compareCoref(goldPath: string, aPath: string, bPath: string, opts: {trials?: number; seed?: number; split?: string} = {}): CorefComparison {
  const {trials = 10_000, seed = 0} = opts
  const gold = readConll(goldPath, opts.split === undefined ? {} : {split: opts.split})
  const a = scoreCoref(gold, readConll(aPath)).perDocument
  const b = scoreCoref(gold, readConll(bPath)).perDocument
  const docs = [...a.keys()].map((k) => [triple(a.get(k) as CorefCounts), triple(b.get(k) as CorefCounts)] as [Triple, Triple])
  const conllA = conllOf(docs, () => 0)
  const conllB = conllOf(docs, () => 1)
  const observed = Math.abs(conllA - conllB)
  const rng = new Rng(seed)
  let atLeast = 0
  for (let t = 0; t < trials; t++) {
    const swap = docs.map(() => (rng.float() < 0.5 ? 1 : 0))
    const x = conllOf(docs, (d) => swap[d] as 0 | 1)
    const y = conllOf(docs, (d) => (1 - (swap[d] as number)) as 0 | 1)
    if (Math.abs(x - y) >= observed - 1e-12) atLeast++
  }
  return {documents: docs.length, conllA, conllB, trials, seed, atLeast, pValue: (atLeast + 1) / (trials + 1)}
}

export function corefComparisonJson(c: CorefComparison): string {
  return JSON.stringify({
    task: 'coref',
    n: c.documents,
    unit: 'document',
    conll_f1_a: c.conllA * 100,
    conll_f1_b: c.conllB * 100,
    test: 'randomization',
    trials: c.trials,
    seed: c.seed,
    at_least: c.atLeast,
    p_value: c.pValue,
  })
}

export function corefComparisonTable(c: CorefComparison, a: string, b: string): string {
  const rows: [string, string][] = [
    ['task', `coref, ${c.documents} documents`],
    ['A', `${a}  CoNLL F1 ${(c.conllA * 100).toFixed(2)}`],
    ['B', `${b}  CoNLL F1 ${(c.conllB * 100).toFixed(2)}`],
    ['test', `paired approximate randomization over documents, ${c.trials} trials (seed ${c.seed}): ${c.atLeast} reached the observed difference`],
    ['p-value', formatP(c.pValue)],
  ]
  return rows.map(([k, v]) => `${k.padEnd(7)}  ${v}`).join('\n') + '\n'
}
