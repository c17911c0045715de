/**
 * What `span demo` shows at its end: the curves of its pre-training and fine-tuning runs (the
 * text charts of `span plot`) and a short table of results, read back from the metrics files
 * it kept in its folder (README.md, "span demo").
 */
import type {Curves, Series} from '../plot/curves.js'
import {shortNumber} from '../plot/scale.js'
import {curvesChart, seriesPaint} from '../plot/terminal.js'
import type {HeldOut} from './learned.js'
import {maxOf} from '../util/arrays.js'

/** A timed stage of the demo and what its results table row says. */
export interface DemoRow {
  stage: string
  what: string
  result: string
  seconds: number
}

/** `1m 52s`, `48s`, `0.4s`. */
export function duration(seconds: number): string {
  if (seconds < 10) return `${seconds.toFixed(1)}s`
  const s = Math.round(seconds)
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`
}

function last(c: Curves, name: string): number | null {
  const s: Series | undefined = c.panels.flatMap((p) => p.series).find((x) => x.name === name)
  return s ? s.points[s.points.length - 1][1] : null
}

/** The pre-training row: steps run, the last training loss and the last held-out loss. */
export function pretrainRow(c: Curves, preset: string, seconds: number): DemoRow {
  const train = last(c, 'loss')
  const held = last(c, 'eval loss')
  const result = [train === null ? 'no loss logged' : `loss ${shortNumber(train)}`, ...(held === null ? [] : [`held-out ${shortNumber(held)}`])].join(', ')
  return {stage: 'pre-training (MLM + SBO)', what: `${preset}, ${c.steps[1]} steps`, result, seconds}
}

/**
 * The SQuAD row, a pipeline check: fine-tune, predict and score ran end to end (epochs and steps,
 * the dev set's exact match and F1 as `span eval squad` scored them). A tiny model pre-trained for
 * a minute is not expected to answer questions; what it learned is the table of learnedTable.
 */
export function squadRow(c: Curves, epochs: number, scores: {exact_match: number; f1: number}, seconds: number): DemoRow {
  return {
    stage: 'SQuAD pipeline check',
    what: `${epochs} epoch${epochs === 1 ? '' : 's'}, ${c.steps[1]} steps`,
    result: `ran end to end (dev EM ${scores.exact_match.toFixed(1)}, F1 ${scores.f1.toFixed(1)})`,
    seconds,
  }
}

/**
 * What the model learned: its held-out figures per head between two baselines on the same targets
 * (learned.ts): a uniform guess over the vocabulary (the untrained model's level, ln V nats) and
 * a unigram model (token frequencies without context).
 */
export function learnedTable(
  model: {mlm: HeldOut; sbo: HeldOut | null; step: number},
  baseline: {mlm: HeldOut; sbo: HeldOut},
  held: number,
  vocabSize: number,
): string[] {
  const pct = (x: number) => `${(100 * x).toFixed(x < 0.001 ? 2 : 1)}%`
  const uniform = [Math.log(vocabSize).toFixed(2), pct(1 / vocabSize)]
  const row = (name: string, m: HeldOut, b: HeldOut) => [
    name,
    ...uniform,
    m.crossEntropy.toFixed(2),
    pct(m.accuracy),
    b.crossEntropy.toFixed(2),
    pct(b.accuracy),
  ]
  const rows: string[][] = [['', 'cross-entropy', 'accuracy', 'cross-entropy', 'accuracy', 'cross-entropy', 'accuracy']]
  rows.push(row('masked tokens (MLM head)', model.mlm, baseline.mlm))
  if (model.sbo) rows.push(row('from span boundaries (SBO head)', model.sbo, baseline.sbo))
  const w = rows[0].map((_, j) => maxOf(rows.map((r) => r[j].length)))
  const line = (r: string[]) =>
    `  ${r[0].padEnd(w[0])}   ${r
      .slice(1)
      .map((x, j) => x.padStart(w[j + 1]))
      .join('   ')}`.trimEnd()
  const group = (name: string, j: number) => name.padEnd(w[j] + 3 + w[j + 1])
  return [
    `pre-training, held out: the ${model.mlm.targets} masked tokens of the ${held} held-out examples after ${model.step} steps`,
    `  ${''.padEnd(w[0])}   ${group('uniform guess', 1)}   ${group('tiny model', 3)}   token frequencies`.trimEnd(),
    ...rows.map(line),
    '  (cross-entropy in nats, lower is better. A uniform guess over the vocabulary is where the untrained model starts; the',
    '  token frequencies of the training text, a unigram model that sees no context, are what a short run learns first;',
    "  going below them takes the context, and longer training than a demo's minute)",
  ]
}

const percent = (x: number) => `${(100 * x).toFixed(1)}%`

/** The era task's row (era.ts): epochs and steps, the dev accuracy beside the majority class's. */
export function eraRow(c: Curves, epochs: number, acc: number, seconds: number): DemoRow {
  const what = `${epochs} epoch${epochs === 1 ? '' : 's'}, ${c.steps[1]} steps`
  return {stage: 'before or after 1910?', what, result: `dev accuracy ${percent(acc)} (majority class 50.0%)`, seconds}
}

/**
 * The demo's last table: what the tiny model learned, a task it had to learn (was a held-out
 * sentence spoken before 1910 or after, era.ts) beside the trivial baseline, the majority class,
 * which scores exactly 50% on the balanced dev set.
 */
export function eraTable(perEra: number, acc: number, epochs: number): string[] {
  const n = 2 * perEra
  const right = (x: number) => `${Math.round(x * n)} of ${n}`
  return [
    `what the tiny model learned: was a sentence spoken before 1910 or after? (${perEra} sentences of the 1862 address, ${perEra} of the end of the 2016 one; neither run saw them)`,
    '                                                     dev accuracy',
    `  majority class (the trivial baseline)              ${percent(0.5).padStart(6)}   ${right(0.5)}`,
    `  tiny model, pre-trained then fine-tuned ${String(epochs).padStart(2)} epoch${epochs === 1 ? ' ' : 's'}  ${percent(acc).padStart(6)}   ${right(acc)}`,
    '  (fine-tuned on as many sentences of the 1790, 1801, 1823 and 1901 addresses as of 1913 to 2000; span predict glue',
    '  and span eval glue scored it)',
  ]
}

/** The results table: one row a stage, then the whole demo's time. */
export function resultsTable(rows: DemoRow[], totalSeconds: number): string[] {
  const all = [
    {stage: 'stage', what: 'run', result: 'result', time: 'time'},
    ...rows.map((r) => ({...r, time: duration(r.seconds)})),
    {stage: 'whole demo', what: '', result: '', time: duration(totalSeconds)},
  ]
  const w = (k: 'stage' | 'what' | 'result') => maxOf(all.map((r) => r[k].length))
  const [ws, ww, wr] = [w('stage'), w('what'), w('result')]
  return all.map((r) => `  ${r.stage.padEnd(ws)}   ${r.what.padEnd(ww)}   ${r.result.padEnd(wr)}   ${r.time}`.trimEnd())
}

/** The curves of one run under a heading naming its metrics file and chart. */
export function curvesSection(title: string, c: Curves, files: {metrics: string; svg: string}, color: boolean): string[] {
  const width = 56
  return ['', `${title}  (${files.metrics}; drawn to ${files.svg})`, ...curvesChart(c, {width, height: 10}, seriesPaint(color))]
}
