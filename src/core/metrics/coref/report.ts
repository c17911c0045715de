/**
 * The official scorer's printed table (`perl scorer.pl all KEY RESPONSE none`, without its
 * `version:` line, which names the script's path; its repeated-mention lines in each metric) and span's JSON. ShowRPF prints numerators
 * and denominators as Perl prints numbers (`%.15g`) and percentages truncated to two decimals
 * (`int(x * 10000) / 100`); the CoNLL F1 line, which the scorer does not print, truncates the
 * mean of the three unrounded F1 the same way.
 */
import {cFixed} from '../cformat.js'
import {blancScore} from './blanc.js'
import {type RPCounts, rpf} from './counts.js'
import {conllF1, type CorefCounts} from './score.js'

/** A number as Perl prints it: `%.15g`. */
export function perlNumber(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e15) return String(x)
  const e = Number(x.toExponential(14).split('e')[1])
  if (e < -4 || e >= 15) {
    const [mant, exp] = x.toExponential(14).split('e') as [string, string]
    const n = Number(exp)
    return `${mant.replace(/\.?0+$/, '')}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`
  }
  return cFixed(x, 14 - e)
    .replace(/(\.\d*?)0+$/, '$1')
    .replace(/\.$/, '')
}

/** `int($x * 10000) / 100` as Perl prints it. */
export const truncPercent = (x: number): string => perlNumber(Math.trunc(x * 10000) / 100)

const DASHES = '-'.repeat(74)

/** ShowRPF's two lines. */
function rpfLines(c: RPCounts, f1?: number): string {
  const s = rpf(c)
  const f = f1 ?? s.f1
  const n = perlNumber
  return `Recall: (${n(c.recallNum)} / ${n(c.recallDen)}) ${truncPercent(s.recall)}%\tPrecision: (${n(c.precisionNum)} / ${n(c.precisionDen)}) ${truncPercent(s.precision)}%\tF1: ${truncPercent(f)}%\n${DASHES}\n`
}

function blancLines(c: CorefCounts): string {
  const b = c.blanc
  const s = blancScore(b)
  return (
    `\nCoreference:\nCoreference links: ${rpfLines({recallNum: b.cCorrect, recallDen: b.cKey, precisionNum: b.cCorrect, precisionDen: b.cResponse})}` +
    `Non-coreference links: ${rpfLines({recallNum: b.nCorrect, recallDen: b.nKey, precisionNum: b.nCorrect, precisionDen: b.nResponse})}` +
    `BLANC: ${rpfLines({recallNum: s.recall, recallDen: 1, precisionNum: s.precision, precisionDen: 1}, s.f1)}`
  )
}

/** The scorer's output for `all ... none`, then the CoNLL F1. */
export function corefTable(c: CorefCounts): string {
  let out = ''
  for (const m of ['muc', 'bcub', 'ceafm', 'ceafe', 'blanc'] as const) {
    out += `\nMETRIC ${m}:\n${c.notes.map((n) => n + '\n').join('')}\n====== TOTALS =======\nIdentification of Mentions: ${rpfLines(c.mentions)}`
    out += m === 'blanc' ? blancLines(c) : `Coreference: ${rpfLines(c[m])}`
  }
  return out + `\nCoNLL-2012 F1 (mean of MUC, B-cubed and CEAFe F1): ${truncPercent(conllF1(c))}%\n`
}

const pct = (x: number) => x * 100

function rpfJson(c: RPCounts) {
  const s = rpf(c)
  return {
    recall: pct(s.recall),
    precision: pct(s.precision),
    f1: pct(s.f1),
    recall_num: c.recallNum,
    recall_den: c.recallDen,
    precision_num: c.precisionNum,
    precision_den: c.precisionDen,
  }
}

/** `--json`: percentages (unrounded), with each metric's numerators and denominators. */
export function corefJson(c: CorefCounts, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const b = blancScore(c.blanc)
  const blanc = {
    recall: pct(b.recall),
    precision: pct(b.precision),
    f1: pct(b.f1),
    coreference_links: rpfJson({recallNum: c.blanc.cCorrect, recallDen: c.blanc.cKey, precisionNum: c.blanc.cCorrect, precisionDen: c.blanc.cResponse}),
    non_coreference_links: rpfJson({recallNum: c.blanc.nCorrect, recallDen: c.blanc.nKey, precisionNum: c.blanc.nCorrect, precisionDen: c.blanc.nResponse}),
  }
  return {
    muc: rpfJson(c.muc),
    bcub: rpfJson(c.bcub),
    ceafm: rpfJson(c.ceafm),
    ceafe: rpfJson(c.ceafe),
    blanc,
    mentions: rpfJson(c.mentions),
    conll_f1: pct(conllF1(c)),
    ...extra,
  }
}
