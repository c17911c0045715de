import {describe, expect, it} from 'vitest'
import {CurveBuilder} from '../../../src/core/plot/curves.js'
import {curvesSvg, curvesTitle, PALETTE} from '../../../src/core/plot/svg.js'
import {curvesChart, seriesPaint} from '../../../src/core/plot/terminal.js'

function build(recs: object[]) {
  const b = new CurveBuilder('m.ndjson')
  recs.forEach((r, i) => b.add(r as Record<string, unknown>, i + 1))
  return b.curves()
}

/** A loss falling 10 → 0 over steps 0–100, and a dev score rising at two evaluations. */
const RUN = build([...[0, 25, 50, 75, 100].map((step) => ({step, loss: 10 - step / 10})), {split: 'dev', step: 50, f1: 40}, {split: 'dev', step: 100, f1: 60}])

describe('curvesChart (text)', () => {
  const lines = curvesChart(RUN, {width: 21, height: 11}, seriesPaint(false))

  it('draws a falling line from the top-left to the bottom-right corner, ticks and steps round', () => {
    const loss = lines.slice(0, lines.indexOf(''))
    // rows: '  ' + tick label (4 wide: 10.0, 7.5, …) + ' ┤' or ' │', then column 0 at index 8
    const at = (row: string) => [...row.slice(8)].flatMap((ch, i) => (ch === '•' ? [i] : []))
    expect(loss.filter((r) => r.includes('┤')).map((r) => r.slice(0, 8))).toEqual(['  10.0 ┤', '   7.5 ┤', '   5.0 ┤', '   2.5 ┤', '   0.0 ┤'])
    expect(at(loss[1])[0]).toBe(0) // step 0, loss 10: top left
    expect(at(loss[11]).at(-1)).toBe(20) // step 100, loss 0: bottom right
    expect(loss[11].startsWith('   0.0 ┤')).toBe(true)
    expect(at(loss[6])).toContain(10) // step 50, loss 5: the middle
    expect(loss[12]).toBe(`       └${'─'.repeat(21)}`)
    expect(loss[13]).toMatch(/^ {8}0 +25 +50 +75 +100 {2}step$/)
    expect(loss[13].indexOf('50') + 1).toBe(8 + 10) // centred under column 10
    expect(loss[14]).toBe('  • loss 0')
    const columns = loss.slice(1, 12).flatMap((row) => at(row))
    expect(new Set(columns).size).toBe(21) // a line: every column drawn
  })

  it('draws the evaluation panel below, only between its first and last evaluation', () => {
    const dev = lines.slice(lines.indexOf('') + 1)
    expect(dev[0]).toBe('  Evaluation (dev)')
    expect(dev[1].slice(0, 8)).toBe('    60 ┤') // labels as wide as the loss panel's: the plots line up
    const columns = dev.slice(1, 12).flatMap((row) => [...row.slice(8)].flatMap((ch, i) => (ch === '•' ? [i] : [])))
    expect([...new Set(columns)].sort((a, b) => a - b)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]) // steps 50–100
    expect(dev.at(-1)).toBe('  • dev f1 60')
  })

  it('has no colour codes unless asked, and colours by series when asked', () => {
    expect(lines.join('\n')).not.toContain('\u001b[')
    expect(curvesChart(RUN, {width: 21, height: 11}, seriesPaint(true)).join('\n')).toContain('\u001b[36m•')
  })
})

describe('curvesSvg', () => {
  const svg = curvesSvg(RUN, 'Training curves', curvesTitle(RUN, 'm.ndjson'))

  it('is one standalone SVG document with a title, a subtitle and both panels', () => {
    expect(svg.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true)
    expect(svg.endsWith('</svg>\n')).toBe(true)
    expect(svg).toContain('>m.ndjson · 7 records · 2 curves · steps 0–100</text>')
    expect(svg).toContain('>Loss</text>')
    expect(svg).toContain('>Evaluation (dev)</text>')
  })

  it('draws the loss as a solid polyline falling left to right, the dev score dashed with a dot per evaluation', () => {
    const [loss, dev] = [...svg.matchAll(/<polyline points="([^"]+)"[^>]*stroke="([^"]+)"([^>]*)>/g)]
    const pts = loss[1].split(' ').map((p) => p.split(',').map(Number))
    expect(pts).toHaveLength(5)
    for (let i = 1; i < pts.length; i++) {
      expect(pts[i][0]).toBeGreaterThan(pts[i - 1][0])
      expect(pts[i][1]).toBeGreaterThan(pts[i - 1][1]) // SVG y grows downwards: the loss falls
    }
    expect([loss[2], loss[3]]).toEqual([PALETTE[0], ' stroke-width="2" stroke-linejoin="round"'])
    expect(dev[3]).toContain('stroke-dasharray')
    expect(svg.match(/<circle [^>]*><title>dev f1 at step (50|100): (40|60)<\/title>/g)).toHaveLength(2)
  })

  it('escapes names', () => {
    const c = build([{step: 1, 'a<b>_loss': 1}])
    expect(curvesSvg(c, 'T & co', 's')).toContain('a&lt;b&gt;_loss 1')
    expect(curvesSvg(c, 'T & co', 's')).toContain('<title>T &amp; co</title>')
  })
})
