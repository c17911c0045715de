import type {MaskingSummary, SpanLengthRow} from './inspect.js'
import {maxOf} from '../util/arrays.js'

/** What the SVG chart shows: the span-length rows and the numbers for its title. */
export interface SvgChartInput {
  rows: SpanLengthRow[]
  unit: 'words' | 'tokens'
  p: number
  maxSpan: number
  spans: number
  examples: number
  mean: number | null
  theoreticalMean: number
}

export function svgInput(m: MaskingSummary, examples: number): SvgChartInput {
  const sl = m.spanLength
  return {rows: sl.rows, unit: sl.unit, p: sl.p, maxSpan: sl.maxSpan, spans: m.spans, examples, mean: sl.mean, theoreticalMean: sl.theoreticalMean}
}

const MIN_W = 840 // wider when there are many lengths, so each pair of bars keeps ≥ 62 px
const GROUP_W = 62
const H = 500
const M = {left: 76, right: 28, top: 112, bottom: 84} // plot margins
export const FONT = `font-family="system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', Helvetica, Arial, sans-serif"`
const COLOR = {observed: '#2563eb', observedText: '#1e40af', theory: '#f59e0b', theoryText: '#b45309', grid: '#e5e7eb', axis: '#6b7280', text: '#111827', muted: '#4b5563'}

export function escapeXml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;'})[c] as string)
}

const f1 = (x: number) => x.toFixed(1)
const count = (n: number) => n.toLocaleString('en-US')

/** A y-axis top and step that give 4 to 8 gridlines at round percentages. */
export function niceScale(max: number): {top: number; step: number} {
  const steps = [0.005, 0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25]
  const m = Math.max(max, 0.01)
  const step = steps.find((s) => Math.ceil(m / s) <= 7) ?? 0.25
  return {top: Math.min(1, Number((Math.ceil(m / step - 1e-9) * step).toFixed(6))), step}
}

/**
 * The span-length chart as a standalone SVG document: per length a pair of vertical bars,
 * observed beside theoretical, with percentage labels, a y axis in percent with gridlines,
 * axis titles, a legend and a title naming p, the clip and the counts.
 */
export function spanLengthSvg(c: SvgChartInput): string {
  const W = Math.max(MIN_W, M.left + M.right + c.rows.length * GROUP_W)
  const pw = W - M.left - M.right
  const ph = H - M.top - M.bottom
  const scale = niceScale(maxOf(c.rows.map((r) => Math.max(r.observedFraction, r.theoretical))))
  const y = (frac: number) => M.top + ph * (1 - frac / scale.top)
  const parts = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" ${FONT}>`,
    `<title>${escapeXml(titleText(c))}</title>`,
    `<rect width="${W}" height="${H}" fill="#ffffff"/>`,
    ...heading(c),
    ...legend(c),
    ...grid(scale, y, pw),
    ...bars(c.rows, y, pw, M.top + ph),
    ...axes(c, pw, ph),
    `</svg>`,
  ]
  return parts.join('\n') + '\n'
}

function titleText(c: SvgChartInput): string {
  return `Span length in ${c.unit}: observed vs Geo(p = ${c.p}) clipped at ${c.maxSpan}`
}

function heading(c: SvgChartInput): string[] {
  const theory = `${c.theoreticalMean.toFixed(2)} theoretical`
  const mean = c.mean === null ? `no spans observed; mean ${theory}` : `mean ${c.mean.toFixed(2)} ${c.unit} observed vs ${theory}`
  const sub = `${count(c.spans)} spans in ${count(c.examples)} examples · ${mean}`
  return [
    `<text x="${M.left}" y="38" font-size="20" font-weight="600" fill="${COLOR.text}">${escapeXml(titleText(c))}</text>`,
    `<text x="${M.left}" y="63" font-size="14" fill="${COLOR.muted}">${escapeXml(sub)}</text>`,
  ]
}

function legend(c: SvgChartInput): string[] {
  const y = 88
  const item = (x: number, color: string, label: string) => [
    `<rect x="${x}" y="${y - 11}" width="14" height="14" rx="2" fill="${color}"/>`,
    `<text x="${x + 20}" y="${y}" font-size="13" fill="${COLOR.text}">${escapeXml(label)}</text>`,
  ]
  const first = 'observed (merged, budget-cut spans)'
  return [...item(M.left, COLOR.observed, first), ...item(M.left + 20 + textWidth(first, 13) + 28, COLOR.theory, `theoretical P(ℓ), p = ${c.p}, ℓ ≤ ${c.maxSpan}`)]
}

/** A generous estimate of a sans-serif label's width (0.56 em a character), for placing what follows it. */
export function textWidth(s: string, size: number): number {
  return Math.ceil(s.length * size * 0.56)
}

function grid(scale: {top: number; step: number}, y: (f: number) => number, pw: number): string[] {
  const out: string[] = []
  const digits = scale.step < 0.01 ? 1 : 0
  for (let i = 0; i * scale.step <= scale.top + 1e-9; i++) {
    const f = i * scale.step
    const yy = f1(y(f))
    if (i > 0) out.push(`<line x1="${M.left}" x2="${M.left + pw}" y1="${yy}" y2="${yy}" stroke="${COLOR.grid}" stroke-width="1"/>`)
    out.push(`<text x="${M.left - 10}" y="${yy}" dy="0.35em" font-size="12" text-anchor="end" fill="${COLOR.muted}">${(f * 100).toFixed(digits)}%</text>`)
  }
  return out
}

/** Two bars per length, observed left of theoretical, each with its percentage above it. */
function bars(rows: SpanLengthRow[], y: (f: number) => number, pw: number, base: number): string[] {
  const gw = pw / rows.length
  const bw = Math.min(26, gw * 0.36)
  const out: string[] = []
  rows.forEach((r, i) => {
    const cx = M.left + gw * (i + 0.5)
    // spread-ok: one bar's few SVG elements
    out.push(...bar(cx - bw - 1, bw, y(r.observedFraction), base, COLOR.observed, COLOR.observedText, r.observedFraction, `length ${r.length}: observed ${(r.observedFraction * 100).toFixed(1)}% (${count(r.observed)} spans)`))
    // spread-ok: one bar's few SVG elements
    out.push(...bar(cx + 1, bw, y(r.theoretical), base, COLOR.theory, COLOR.theoryText, r.theoretical, `length ${r.length}: theoretical ${(r.theoretical * 100).toFixed(1)}%`))
    out.push(`<text x="${f1(cx)}" y="${base + 22}" font-size="13" text-anchor="middle" fill="${COLOR.text}">${escapeXml(r.length)}</text>`)
  })
  return out
}

function bar(x: number, w: number, top: number, base: number, fill: string, textFill: string, frac: number, tip: string): string[] {
  const h = Math.max(0, base - top)
  const out = [`<rect x="${f1(x)}" y="${f1(top)}" width="${f1(w)}" height="${f1(h)}" rx="2" fill="${fill}"><title>${escapeXml(tip)}</title></rect>`]
  if (frac > 0) {
    const label = frac < 0.001 ? '<0.1' : (frac * 100).toFixed(1)
    out.push(`<text x="${f1(x + w / 2)}" y="${f1(top - 5)}" font-size="10" text-anchor="middle" fill="${textFill}">${escapeXml(label)}</text>`)
  }
  return out
}

function axes(c: SvgChartInput, pw: number, ph: number): string[] {
  const base = M.top + ph
  const midY = M.top + ph / 2
  return [
    `<line x1="${M.left}" x2="${M.left + pw}" y1="${base}" y2="${base}" stroke="${COLOR.axis}" stroke-width="1.2"/>`,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${base}" stroke="${COLOR.axis}" stroke-width="1.2"/>`,
    `<text x="${M.left + pw / 2}" y="${base + 48}" font-size="14" text-anchor="middle" fill="${COLOR.text}">span length (${c.unit})</text>`,
    `<text transform="translate(22 ${midY}) rotate(-90)" font-size="14" text-anchor="middle" fill="${COLOR.text}">share of spans</text>`,
    `<text x="${M.left}" y="${H - 12}" font-size="11" fill="${COLOR.axis}">Observed spans are merged when they touch and cut by the masking budget, so their lengths differ from the sampled ones.</text>`,
  ]
}
