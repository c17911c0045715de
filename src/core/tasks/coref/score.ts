/**
 * Dev scores for `finetune coref`'s best/ selection: `span eval coref`'s numbers (the official
 * CoNLL-2012 scorer v8.01's, metrics/coref/), flattened to percentages: MUC, B³, CEAFm, CEAFe and
 * BLANC F1, mention identification F1, and the CoNLL F1 (the mean of MUC, B³ and CEAFe F1).
 */
import {blancScore} from '../../metrics/coref/blanc.js'
import {rpf} from '../../metrics/coref/counts.js'
import {conllF1, scoreCoref} from '../../metrics/coref/score.js'
import type {DevScores} from '../../train/adapter.js'
import type {ConllDoc, Mention} from './conll.js'

const pct = (x: number) => Math.round(x * 1e6) / 1e4

/** The scores of predicted clusters (per document, in the gold's order) against the gold documents. */
export function corefDevScores(gold: ConllDoc[], predicted: Mention[][][]): DevScores {
  const c = scoreCoref(
    gold.map((d) => ({key: d.key, clusters: d.clusters})),
    gold.map((d, i) => ({key: d.key, clusters: predicted[i] ?? []})),
  )
  return {
    muc_f1: pct(rpf(c.muc).f1),
    bcub_f1: pct(rpf(c.bcub).f1),
    ceafm_f1: pct(rpf(c.ceafm).f1),
    ceafe_f1: pct(rpf(c.ceafe).f1),
    blanc_f1: pct(blancScore(c.blanc).f1),
    mention_f1: pct(rpf(c.mentions).f1),
    conll_f1: pct(conllF1(c)),
  }
}
