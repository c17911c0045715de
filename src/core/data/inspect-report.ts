import {PRODUCER} from '../stream/header.js'
import {histogramChart, int, pct, spanLengthChart, type Paint} from './chart.js'
import type {InspectSummary, LengthSummary, MaskingSummary, TagsReport} from './inspect.js'

const KIND_NAMES = {tokens: 'token records', blocks: 'blocks', masked: 'masked examples'} as const
const BAR = 28 // cells of the widest bar

/** The readable report `span inspect` prints (its --json twin is the summary itself). */
export function formatReport(s: InspectSummary, p: Paint): string[] {
  const out = [p.bold(`span inspect: ${s.source}`) + `  ${kindLine(s)}`, '']
  out.push(field('records', int(s.records)))
  const content = s.nonSpecialTokens === null || s.kind === 'tokens' || s.records === 0 ? '' : p.dim(`  (${int(s.nonSpecialTokens)} without [CLS]/[SEP]/[PAD])`)
  out.push(field('tokens', int(s.tokens) + content))
  out.push(field('documents', s.documents === null ? p.dim('— (no doc field)') : int(s.documents)))
  if (s.pairs) out.push(field('pairs', `${int(s.pairs.examples)} with next  (${pct(s.pairs.next / s.pairs.examples)} next = true)`))
  // spread-ok: a report section: one line per histogram row
  if (s.records > 0) out.push('', ...lengthSection(s.length, p))
  // spread-ok: report sections: one line per histogram row or label
  if (s.tags) out.push('', ...tagsSection(s.tags, s.kind === 'blocks' ? 'block' : 'record', p))
  // spread-ok: report sections: one line per histogram row
  if (s.masking) out.push('', ...maskingSection(s.masking, p), '', ...chartSection(s.masking, p))
  return out
}

/** Tags (docs/formats.md#tags): per record or block, by label, lengths beside the geometric law. */
function tagsSection(t: TagsReport, unit: string, p: Paint): string[] {
  const labels = Object.entries(t.byLabel).map(([l, c]) => `${l} ${int(c.spans)} ${p.dim(`(${(c.tokens / c.spans).toFixed(2)} tokens)`)}`)
  return [
    p.bold('tags'),
    field('  tagged spans', `${int(t.tags)}  ${p.dim(`(${num(t.perRecord, 2)} per ${unit}; ${int(t.taggedRecords)} of ${int(t.records)} ${unit}s have tags)`)}`),
    field('  by label', labels.join('   ')),
    field('  length', `mean ${num(t.length.mean, 2)} ${t.length.unit} vs ${t.length.geometricMean.toFixed(2)} for geometric spans`),
    ...spanLengthChart(t.length.rows, BAR, p),
  ]
}

function originLines(m: MaskingSummary, p: Paint): string[] {
  const o = m.origins
  if (!o) return []
  const by = Object.entries(o.byOrigin).map(([l, c]) => `${l} ${int(c.spans)}`)
  return [field('  from tags', `${pct(o.taggedShare.spans)} of spans, ${pct(o.taggedShare.tokens)} of masked tokens  ${p.dim(`(${by.join(', ')})`)}`)]
}

function kindLine(s: InspectSummary): string {
  if (s.kind === null) return '(empty input)'
  const from = s.kindFrom === 'header' ? 'from the header' : s.kindFrom === 'flag' ? 'from --kind' : 'guessed from the record shape'
  return `${KIND_NAMES[s.kind]} of ${PRODUCER[s.kind]} (${from})`
}

function field(name: string, value: string): string {
  return `${name.padEnd(18)}${value}`
}

function num(x: number | null, digits = 0): string {
  return x === null ? '—' : x.toFixed(digits)
}

function lengthSection(l: LengthSummary, p: Paint): string[] {
  const title = `length in tokens${l.paddingFree ? ', padding-free' : ''}`
  const stats = `min ${num(l.min)}   mean ${num(l.mean, 1)}   median ${num(l.median)}   p95 ${num(l.p95)}   max ${num(l.max)}`
  return [p.bold(title), `  ${stats}`, ...histogramChart(l.histogram, BAR, p)]
}

function maskingSection(m: MaskingSummary, p: Paint): string[] {
  const sl = m.spanLength
  const ratio = m.maskRatio === null ? p.dim('— (special-token ids unknown)') : `${pct(m.maskRatio, 2)}  ${p.dim(`(${int(m.targets)} targets / ${int(m.nonSpecialTokens ?? 0)} non-special tokens)`)}`
  const kinds = (k: MaskingSummary['replacement']['perSpan']) => `mask ${pct(k.mask)}   random ${pct(k.random)}   keep ${pct(k.keep)}`
  const lines = [
    p.bold('masking'),
    field('  mask ratio', ratio),
    field('  spans', `${int(m.spans)}  ${p.dim(`(${num(m.spansPerExample, 2)} per example)`)}`),
    field('  replacement', `per span   ${kinds(m.replacement.perSpan)}`),
    field('', `per token  ${kinds(m.replacement.perToken)}`),
    field('  span length', `mean ${num(sl.mean, 2)} ${sl.unit} observed vs ${sl.theoreticalMean.toFixed(2)} theoretical  ${p.dim(`(mean ${num(sl.meanTokens, 2)} tokens per span)`)}`),
    field('', p.dim('observed spans are merged and cut by the budget (docs/algorithms.md#span-masking step 4), so they differ from the sampled lengths')),
  ]
  return [...lines, ...originLines(m, p), ...consistencyLines(m)]
}

function consistencyLines(m: MaskingSummary): string[] {
  const c = m.consistency
  const out: string[] = []
  if (c.targetsOutsideSpans > 0) out.push(field('  warning', `${int(c.targetsOutsideSpans)} targets lie outside every span`))
  if (c.spanTokensWithoutTarget > 0) out.push(field('  warning', `${int(c.spanTokensWithoutTarget)} span tokens are not targets`))
  return out
}

function chartSection(m: MaskingSummary, p: Paint): string[] {
  const sl = m.spanLength
  const from = sl.from === 'header' ? 'from the header' : sl.from === 'flags' ? 'from flags' : 'defaults'
  const scheme = sl.scheme && sl.scheme !== 'span' ? p.dim(`  (stream masked with --scheme ${sl.scheme}: the geometric law does not apply)`) : ''
  const title = `span length in ${sl.unit}: ${p.observed('observed')} vs ${p.theory('theoretical')} Geo(p = ${sl.p}) clipped at ${sl.maxSpan} ${p.dim(`(${from})`)}`
  return [p.bold(title) + scheme, ...spanLengthChart(sl.rows, BAR, p)]
}
