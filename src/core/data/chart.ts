import chalk, {Chalk} from 'chalk'
import type {SpanLengthRow} from './inspect.js'
import {maxOf} from '../util/arrays.js'

/** Colours of the text report; identity functions when colour is off (stdout not a TTY). */
export interface Paint {
  observed(s: string): string
  theory(s: string): string
  dim(s: string): string
  bold(s: string): string
}

export function paint(color: boolean): Paint {
  const c = new Chalk({level: color ? Math.max(chalk.level, 1) as 1 | 2 | 3 : 0})
  return {observed: c.cyan, theory: c.magenta, dim: c.dim, bold: c.bold}
}

const EIGHTHS = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉']

/** A solid bar of `frac` × width cells, to an eighth of a cell; a non-zero value shows at least ▏. */
export function solidBar(frac: number, width: number): string {
  const eighths = Math.round(Math.max(0, Math.min(1, frac)) * width * 8)
  const shown = frac > 0 && eighths === 0 ? 1 : eighths
  return '█'.repeat(Math.floor(shown / 8)) + EIGHTHS[shown % 8]
}

/** A shaded bar (░) of whole cells, so it reads apart from a solid one without colour. */
export function shadeBar(frac: number, width: number): string {
  const cells = Math.round(Math.max(0, Math.min(1, frac)) * width)
  return '░'.repeat(frac > 0 && cells === 0 ? 1 : cells)
}

export function pct(frac: number, digits = 1): string {
  return `${(frac * 100).toFixed(digits)}%`
}

export function int(n: number): string {
  return n.toLocaleString('en-US')
}

/**
 * The span-length chart: per length two horizontal bars, observed (█) above theoretical (░),
 * on one scale (the largest share fills `width` cells), each followed by its percentage.
 *
 *    1  observed ████████████████▍        21.3%  (1,065)
 *       theory   ░░░░░░░░░░░░░░░░░        22.6%
 */
export function spanLengthChart(rows: SpanLengthRow[], width: number, p: Paint): string[] {
  const top = maxOf(rows.map((r) => Math.max(r.observedFraction, r.theoretical)), 1e-9)
  const label = maxOf(rows.map((r) => r.length.length))
  const out: string[] = []
  for (const r of rows) {
    const obs = solidBar(r.observedFraction / top, width).padEnd(width)
    const theo = shadeBar(r.theoretical / top, width).padEnd(width)
    out.push(`  ${r.length.padStart(label)}  ${p.dim('observed')} ${p.observed(obs)} ${pct(r.observedFraction).padStart(6)}  ${p.dim(`(${int(r.observed)})`)}`)
    out.push(`  ${''.padStart(label)}  ${p.dim('theory  ')} ${p.theory(theo)} ${pct(r.theoretical).padStart(6)}`)
  }
  return out
}

/** A length histogram: one line per bin, `from – to`, a bar scaled to the fullest bin, the count. */
export function histogramChart(bins: Array<{from: number; to: number; count: number}>, width: number, p: Paint): string[] {
  const top = maxOf(bins.map((b) => b.count), 1)
  const fw = maxOf(bins.map((b) => String(b.from).length), 0)
  const tw = maxOf(bins.map((b) => String(b.to).length), 0)
  const single = bins.every((b) => b.from === b.to) // bins one value wide: no ranges
  const label = (b: {from: number; to: number}) => (single ? String(b.from).padStart(fw) : `${String(b.from).padStart(fw)} – ${String(b.to).padStart(tw)}`)
  return bins.map((b) => `  ${label(b)}  ${p.observed(solidBar(b.count / top, width).padEnd(width))} ${int(b.count)}`)
}
