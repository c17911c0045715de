/**
 * Curves as text, in the style of `span inspect`'s charts: one glyph per series (so they read
 * apart without colour), coloured on a terminal, y ticks on the left, steps below, a legend.
 *
 *   Loss
 *    10.0 ┤•
 *         │ •••
 *     5.0 ┤    ••••••×××××
 *         └───────────────
 *          0    100    200 step
 *   • loss 4.12   × eval loss 4.30
 */
import chalk, {Chalk} from 'chalk'
import {colorIndex, type Curves, type Panel, type Series} from './curves.js'
import {niceAxis, shortNumber, tickLabel, type Axis} from './scale.js'
import {maxOf, minOf} from '../util/arrays.js'

export const GLYPHS = ['•', '×', '+', 'o', '*', '#', '~', '^']

export interface SeriesPaint {
  series(i: number, s: string): string
  dim(s: string): string
  bold(s: string): string
}

export function seriesPaint(color: boolean): SeriesPaint {
  const c = new Chalk({level: color ? (Math.max(chalk.level, 1) as 1 | 2 | 3) : 0})
  const hues = [c.cyan, c.magenta, c.yellow, c.green, c.blue, c.red, c.white, c.gray]
  return {series: (i, s) => hues[i % hues.length](s), dim: c.dim, bold: c.bold}
}

export interface ChartSize {
  width: number // plot columns
  height: number // plot rows
}

/**
 * The y axis of a panel: its points' range (every row shows data; a text chart has few), with
 * round ticks inside it; a flat curve gets the round range around its value.
 */
function yAxis(panel: Panel, target: number): Axis {
  const ys = panel.series.flatMap((s) => s.points.map(([, y]) => y))
  const [lo, hi] = [minOf(ys), maxOf(ys)]
  const round = niceAxis(lo, hi, target)
  if (hi === lo) return round
  return {min: lo, max: hi, step: round.step, ticks: round.ticks.filter((t) => t >= lo - round.step * 1e-9 && t <= hi + round.step * 1e-9)}
}

const yAxisOf = (panel: Panel, size: ChartSize) => yAxis(panel, Math.max(2, Math.round(size.height / 2.5)))

const labelWidth = (y: Axis) =>
  maxOf(
    y.ticks.map((t) => tickLabel(t, y.step).length),
    0,
  )

/** Every panel of the curves, one under the other, on one step axis (their plots aligned). */
export function curvesChart(c: Curves, size: ChartSize, p: SeriesPaint): string[] {
  const x = niceAxis(c.steps[0], c.steps[1], 4, true)
  const lw = maxOf(c.panels.map((panel) => labelWidth(yAxisOf(panel, size))))
  return c.panels.flatMap((panel, i) => [...(i > 0 ? [''] : []), ...panelChart(panel, x, size, p, lw)])
}

/** One panel; `minLabel` widens the tick labels to line its plot up with the other panels'. */
export function panelChart(panel: Panel, x: Axis, size: ChartSize, p: SeriesPaint, minLabel = 0): string[] {
  const y = yAxisOf(panel, size)
  const grid: Array<Array<{ch: string; i: number} | null>> = Array.from({length: size.height}, () => new Array(size.width).fill(null))
  const col = (step: number) => Math.round(((step - x.min) / (x.max - x.min)) * (size.width - 1))
  const row = (v: number) => Math.round(((y.max - v) / (y.max - y.min)) * (size.height - 1))
  const colors = colorIndex(panel)
  panel.series.forEach((s, i) => drawSeries(grid, s, i, colors[i], col, row))
  const labels = new Map(y.ticks.map((t) => [row(t), tickLabel(t, y.step)]))
  const lw = maxOf(
    [...labels.values()].map((l) => l.length),
    minLabel,
  )
  const body = grid.map((cells, r) => {
    const axis = labels.has(r) ? `${(labels.get(r) as string).padStart(lw)} ┤` : `${''.padStart(lw)} │`
    return `  ${p.dim(axis)}${cells
      .map((cell) => (cell ? p.series(cell.i, cell.ch) : ' '))
      .join('')
      .trimEnd()}`
  })
  return [
    `  ${p.bold(panel.title)}`,
    ...body,
    `  ${p.dim(`${''.padStart(lw)} └${'─'.repeat(size.width)}`)}`,
    `  ${p.dim(xLabels(x, col, lw + 2, size.width))}`,
    ...legend(panel.series, colors, p),
  ]
}

/**
 * One series: at each column between its first and last point the value interpolated there,
 * and the rows between neighbouring columns filled, so a steep fall reads as a line.
 */
function drawSeries(
  grid: Array<Array<{ch: string; i: number} | null>>,
  s: Series,
  i: number,
  color: number,
  col: (x: number) => number,
  row: (y: number) => number,
): void {
  const ch = GLYPHS[i % GLYPHS.length]
  const put = (r: number, c: number) => (grid[r][c] = {ch, i: color})
  const pts = s.points
  let prev: number | null = null
  for (let c = col(pts[0][0]); c <= col(pts[pts.length - 1][0]); c++) {
    const r = row(valueAt(pts, c, col))
    if (prev !== null) for (let k = Math.min(prev, r) + 1; k < Math.max(prev, r); k++) put(k, c)
    put(r, c)
    prev = r
  }
  for (const [sx, sy] of pts) put(row(sy), col(sx))
}

/** The series' value at column `c`: linear between the points whose columns enclose it. */
function valueAt(pts: Array<[number, number]>, c: number, col: (x: number) => number): number {
  const j = pts.findIndex(([sx]) => col(sx) >= c)
  if (j <= 0) return pts[Math.max(0, j)][1]
  const [x0, y0] = pts[j - 1]
  const [x1, y1] = pts[j]
  const c0 = col(x0)
  const c1 = col(x1)
  return c1 === c0 ? y1 : y0 + ((y1 - y0) * (c - c0)) / (c1 - c0)
}

/** Step labels centred under their columns, skipping one that would touch the previous. */
function xLabels(x: Axis, col: (v: number) => number, indent: number, width: number): string {
  let line = ''
  for (const t of x.ticks) {
    const label = tickLabel(t, x.step)
    const at = Math.max(indent, Math.min(indent + col(t) - Math.floor(label.length / 2), indent + width - label.length))
    if (line === '' || at > line.length) line = line.padEnd(at) + label
  }
  return `${line}  step`
}

/** Glyph, name and the last value of each series, as many to a line as fit in 80 columns. */
function legend(series: Series[], colors: number[], p: SeriesPaint): string[] {
  const items = series.map((s, i) => ({text: `${GLYPHS[i % GLYPHS.length]} ${s.name} ${shortNumber(s.points[s.points.length - 1][1])}`, i: colors[i]}))
  const groups: Array<typeof items> = [[]]
  let len = 2
  for (const it of items) {
    const cur = groups[groups.length - 1]
    if (cur.length > 0 && len + it.text.length + 3 > 80) {
      groups.push([it])
      len = 2 + it.text.length + 3
    } else {
      cur.push(it)
      len += it.text.length + 3
    }
  }
  return groups.map((g) => `  ${g.map((it) => p.series(it.i, it.text)).join('   ')}`)
}
