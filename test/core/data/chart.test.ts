import {describe, expect, it} from 'vitest'
import {histogramChart, paint, shadeBar, solidBar, spanLengthChart} from '../../../src/core/data/chart.js'
import {escapeXml, niceScale, spanLengthSvg, svgInput} from '../../../src/core/data/chart-svg.js'
import {inspectRecords} from '../../../src/core/data/inspect.js'
import {continuationTable} from '../../../src/core/data/inspect-spans.js'
import {spanLengthDistribution} from '../../../src/core/data/spanlen.js'
import {EXAMPLE_A, EXAMPLE_B, SPECIAL, VOCAB, stream} from './inspect-fixtures.js'

const ESC = '\u001b['

async function masking() {
  const opts = {kind: 'masked' as const, kindFrom: 'header' as const, special: SPECIAL, continuation: continuationTable(VOCAB), vocabSize: VOCAB.length, span: {p: 0.2, maxSpan: 10, from: 'header' as const, scheme: 'span'}}
  return (await inspectRecords('test', stream([EXAMPLE_A, EXAMPLE_B]), opts)).masking!
}

/**
 * A strict-enough XML well-formedness check: an optional declaration, one root element, balanced
 * and properly nested tags, double-quoted attributes without `<` or a bare `&`, no duplicate
 * attribute, and text with `&` only in entities. Returns the element names in document order.
 */
function parseXml(xml: string): string[] {
  const s = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, '')
  const tag = /<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+="(?:[^"<&]|&(?:amp|lt|gt|quot|apos);)*")*)\s*(\/?)>/y
  const stack: string[] = []
  const names: string[] = []
  let i = 0
  while (i < s.length) {
    const lt = s.indexOf('<', i)
    const text = s.slice(i, lt === -1 ? s.length : lt)
    if (/&(?!(amp|lt|gt|quot|apos);)/.test(text)) throw new Error(`bare & in text: ${text}`)
    if (stack.length === 0 && text.trim() !== '') throw new Error(`text outside the root: ${text}`)
    if (lt === -1) break
    tag.lastIndex = lt
    const m = tag.exec(s)
    if (!m) throw new Error(`malformed tag at ${lt}: ${s.slice(lt, lt + 60)}`)
    const [whole, close, name, attrs, selfClose] = m
    const keys = [...attrs.matchAll(/([\w:.-]+)="/g)].map((a) => a[1])
    if (new Set(keys).size !== keys.length) throw new Error(`duplicate attribute in ${whole}`)
    if (close) {
      if (stack.pop() !== name) throw new Error(`</${name}> closes the wrong element`)
    } else {
      if (stack.length === 0 && names.length > 0) throw new Error('second root element')
      names.push(name)
      if (!selfClose) stack.push(name)
    }
    i = lt + whole.length
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.at(-1)}>`)
  return names
}

describe('terminal bars', () => {
  it('draw solid bars to an eighth of a cell and shaded bars in whole cells', () => {
    expect(solidBar(1, 10)).toBe('██████████')
    expect(solidBar(0.5, 3)).toBe('█▌')
    expect(solidBar(0.001, 10)).toBe('▏') // a non-zero share stays visible
    expect(solidBar(0, 10)).toBe('')
    expect(shadeBar(0.5, 10)).toBe('░░░░░')
    expect(shadeBar(0, 10)).toBe('')
  })

  it('pair observed and theoretical rows per length, on one scale, without colour off a TTY', async () => {
    const m = await masking()
    const lines = spanLengthChart(m.spanLength.rows, 20, paint(false))
    expect(lines).toHaveLength(2 * 11)
    expect(lines[0]).toBe(`    1  observed ${'█'.repeat(20)}  50.0%  (2)`) // the largest share fills the width
    expect(lines[1]).toBe(`       theory   ${'░'.repeat(9).padEnd(20)}  22.4%`) // 0.224 / 0.5 of 20 cells
    expect(lines[20]).toBe(`  >10  observed ${''.padEnd(20)}   0.0%  (0)`)
    expect(lines.join('\n')).not.toContain(ESC)
  })

  it('colour the bars when asked', async () => {
    const m = await masking()
    expect(spanLengthChart(m.spanLength.rows, 20, paint(true)).join('\n')).toContain(ESC)
  })

  it('draw a length histogram with aligned ranges', () => {
    const lines = histogramChart([{from: 7, to: 9, count: 2}, {from: 10, to: 12, count: 4}], 8, paint(false))
    expect(lines).toEqual(['   7 –  9  ████     2', '  10 – 12  ████████ 4'])
  })
})

describe('SVG chart', () => {
  it('is a well-formed standalone SVG document', async () => {
    const svg = spanLengthSvg(svgInput(await masking(), 2))
    const names = parseXml(svg)
    expect(() => parseXml('<svg><g></svg>')).toThrow('</svg> closes the wrong element') // the check is not vacuous
    expect(() => parseXml('<svg><text>a & b</text></svg>')).toThrow('bare &')
    expect(names[0]).toBe('svg')
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"')
    expect(names.filter((n) => n === 'rect').length).toBe(1 + 2 + 2 * 11) // background, legend swatches, bars
  })

  it('has an observed and a theoretical bar for each length, the title with p, the clip and the counts', async () => {
    const svg = spanLengthSvg(svgInput(await masking(), 2))
    for (const len of ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '&gt;10']) {
      expect(svg).toContain(`<title>length ${len}: observed`)
      expect(svg).toContain(`<title>length ${len}: theoretical`)
    }
    expect(svg).toContain('<title>Span length in words: observed vs Geo(p = 0.2) clipped at 10</title>')
    expect(svg).toContain('4 spans in 2 examples · mean 1.75 words observed vs 3.80 theoretical')
    expect(svg).toContain('span length (words)')
    expect(svg).toContain('share of spans')
  })

  it('draws bar heights in proportion to the shares', async () => {
    const svg = spanLengthSvg(svgInput(await masking(), 2))
    const height = (label: string) => Number(new RegExp(`height="([\\d.]+)" rx="2" fill="[^"]+"><title>length ${label}`).exec(svg)![1])
    const dist = spanLengthDistribution(0.2, 10)
    expect(height('1: theoretical') / height('3: theoretical')).toBeCloseTo(dist[0] / dist[2], 2)
    expect(height('1: observed') / height('2: observed')).toBeCloseTo(2, 2)
    expect(height('4: observed')).toBe(0)
  })

  it('escapes text and picks round gridlines', () => {
    expect(escapeXml(`a<b&"c'>`)).toBe('a&lt;b&amp;&quot;c&apos;&gt;')
    expect(niceScale(0.303)).toEqual({top: 0.35, step: 0.05})
    expect(niceScale(0.5)).toEqual({top: 0.5, step: 0.1})
    expect(niceScale(0.9)).toEqual({top: 1, step: 0.2})
    expect(niceScale(0)).toEqual({top: 0.01, step: 0.005})
  })
})
