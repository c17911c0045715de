/**
 * Curves as a standalone SVG document, in the style of `span inspect --svg` (same fonts, greys,
 * title and subtitle): one panel per group (losses, evaluation scores) stacked on one step
 * axis, each with round y ticks and gridlines, a legend naming each curve and its last value;
 * training curves solid, evaluation curves dashed with a dot at each evaluation.
 */
import {escapeXml, FONT, textWidth} from '../data/chart-svg.js'
import {colorIndex, type Curves, type Panel, type Series} from './curves.js'
import {niceAxis, shortNumber, tickLabel, type Axis} from './scale.js'
import {maxOf, minOf, pushAll} from '../util/arrays.js'

const W = 880
const M = {left: 80, right: 32} // plot margins, both panels
const HEAD = 86 // title and subtitle
const PANEL = {title: 30, legendRow: 22, plot: 250, axis: 58} // a panel's bands, top to bottom
export const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#0891b2', '#db2777', '#65a30d']
const GREY = {grid: '#e5e7eb', axis: '#6b7280', text: '#111827', muted: '#4b5563'}
const f1 = (x: number) => x.toFixed(1)

/** The SVG of every panel; `subtitle` names the source (the metrics file) under the title. */
export function curvesSvg(c: Curves, title: string, subtitle: string): string {
  const x = niceAxis(c.steps[0], c.steps[1], 8, true)
  const pw = W - M.left - M.right
  const parts: string[] = []
  let top = HEAD
  for (const panel of c.panels) {
    const rows = legendRows(panel, pw)
    pushAll(parts, panelSvg(panel, x, top, rows))
    top += PANEL.title + rows.length * PANEL.legendRow + PANEL.plot + PANEL.axis
  }
  const H = top + 8
  return (
    [
      `<?xml version="1.0" encoding="UTF-8"?>`,
      `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT}>`,
      `<title>${escapeXml(title)}</title>`,
      `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
      `<text x="${M.left}" y="38" font-size="20" font-weight="600" fill="${GREY.text}">${escapeXml(title)}</text>`,
      `<text x="${M.left}" y="63" font-size="14" fill="${GREY.muted}">${escapeXml(subtitle)}</text>`,
      ...parts,
      `</svg>`,
    ].join('\n') + '\n'
  )
}

interface LegendItem {
  i: number
  color: string
  label: string
  x: number
}

/** Legend items (swatch, name, last value) laid out left to right, wrapping at the plot's width. */
function legendRows(panel: Panel, pw: number): LegendItem[][] {
  const rows: LegendItem[][] = [[]]
  const colors = colorIndex(panel)
  let x = 0
  panel.series.forEach((s, i) => {
    const label = `${s.name} ${shortNumber(s.points[s.points.length - 1][1])}`
    const w = 30 + textWidth(label, 13) + 24
    if (x > 0 && x + w > pw) {
      rows.push([])
      x = 0
    }
    rows[rows.length - 1].push({i, color: PALETTE[colors[i] % PALETTE.length], label, x})
    x += w
  })
  return rows
}

function panelSvg(panel: Panel, x: Axis, top: number, legend: LegendItem[][]): string[] {
  const ys = panel.series.flatMap((s) => s.points.map(([, v]) => v))
  const y = niceAxis(minOf(ys), maxOf(ys), 5)
  const pw = W - M.left - M.right
  const plotTop = top + PANEL.title + legend.length * PANEL.legendRow + 6
  const base = plotTop + PANEL.plot
  const px = (v: number) => M.left + ((v - x.min) / (x.max - x.min)) * pw
  const py = (v: number) => base - ((v - y.min) / (y.max - y.min)) * PANEL.plot
  const items = legend.flat() // in series order
  return [
    `<text x="${M.left}" y="${top + 20}" font-size="16" font-weight="600" fill="${GREY.text}">${escapeXml(panel.title)}</text>`,
    ...legend.flatMap((row, r) => row.flatMap((it) => legendItem(panel.series[it.i], it, top + PANEL.title + r * PANEL.legendRow + 10))),
    ...yGrid(y, py, pw),
    ...xTicks(x, px, base),
    `<line x1="${M.left}" x2="${M.left + pw}" y1="${base}" y2="${base}" stroke="${GREY.axis}" stroke-width="1.2"/>`,
    `<line x1="${M.left}" x2="${M.left}" y1="${plotTop}" y2="${base}" stroke="${GREY.axis}" stroke-width="1.2"/>`,
    `<text transform="translate(22 ${f1(plotTop + PANEL.plot / 2)}) rotate(-90)" font-size="14" text-anchor="middle" fill="${GREY.text}">${escapeXml(panel.yLabel)}</text>`,
    `<text x="${M.left + pw / 2}" y="${base + 44}" font-size="14" text-anchor="middle" fill="${GREY.text}">step</text>`,
    ...panel.series.flatMap((s, i) => seriesSvg(s, items[i].color, px, py)),
  ]
}

function legendItem(s: Series, it: LegendItem, y: number): string[] {
  const color = it.color
  const x = M.left + it.x
  const dash = s.split === 'train' ? '' : ` stroke-dasharray="5 3"`
  return [
    `<line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${color}" stroke-width="2.5"${dash}/>`,
    ...(s.split === 'train' ? [] : [`<circle cx="${x + 11}" cy="${y}" r="3.2" fill="${color}"/>`]),
    `<text x="${x + 30}" y="${y}" dy="0.35em" font-size="13" fill="${GREY.text}">${escapeXml(it.label)}</text>`,
  ]
}

function yGrid(y: Axis, py: (v: number) => number, pw: number): string[] {
  return y.ticks.flatMap((t, i) => [
    ...(i > 0 ? [`<line x1="${M.left}" x2="${M.left + pw}" y1="${f1(py(t))}" y2="${f1(py(t))}" stroke="${GREY.grid}" stroke-width="1"/>`] : []),
    `<text x="${M.left - 10}" y="${f1(py(t))}" dy="0.35em" font-size="12" text-anchor="end" fill="${GREY.muted}">${tickLabel(t, y.step)}</text>`,
  ])
}

function xTicks(x: Axis, px: (v: number) => number, base: number): string[] {
  return x.ticks.flatMap((t) => [
    `<line x1="${f1(px(t))}" x2="${f1(px(t))}" y1="${base}" y2="${base + 5}" stroke="${GREY.axis}" stroke-width="1"/>`,
    `<text x="${f1(px(t))}" y="${base + 20}" font-size="12" text-anchor="middle" fill="${GREY.muted}">${tickLabel(t, x.step)}</text>`,
  ])
}

/** A polyline through the points; evaluation curves dashed, with a dot (and its value as a tooltip) at each point. */
function seriesSvg(s: Series, color: string, px: (v: number) => number, py: (v: number) => number): string[] {
  const pts = s.points.map(([sx, sy]) => `${f1(px(sx))},${f1(py(sy))}`).join(' ')
  const train = s.split === 'train'
  const dash = train ? '' : ` stroke-dasharray="6 4"`
  const out = [
    `<polyline points="${pts}" fill="none" stroke="${color}" stroke-width="${train ? 2 : 1.8}" stroke-linejoin="round"${dash}><title>${escapeXml(s.name)}</title></polyline>`,
  ]
  if (!train || s.points.length === 1) {
    for (const [sx, sy] of s.points)
      out.push(
        `<circle cx="${f1(px(sx))}" cy="${f1(py(sy))}" r="3.5" fill="${color}"><title>${escapeXml(`${s.name} at step ${sx}: ${shortNumber(sy)}`)}</title></circle>`,
      )
  }
  return out
}

/** The subtitle: where the curves come from and what they cover. */
export function curvesTitle(c: Curves, source: string): string {
  const n = c.panels.reduce((a, p) => a + p.series.length, 0)
  return `${source} · ${c.records.toLocaleString('en-US')} records · ${n} curves · steps ${c.steps[0].toLocaleString('en-US')}–${c.steps[1].toLocaleString('en-US')}`
}
