/** The metrics file in, the SVG file out: what `span plot --svg` and `span demo` both do. */
import {basename} from 'node:path'
import {writeChartFile} from '../data/chart-file.js'
import {openSource} from '../stream/lines.js'
import {readCurves, type Curves} from './curves.js'
import {curvesSvg, curvesTitle} from './svg.js'

/** The curves of a metrics file (`-`: stdin). */
export async function readCurvesFile(path: string): Promise<Curves> {
  return readCurves(await openSource(path))
}

/** Draws the curves to `svg`, whole or not at all; the subtitle names the metrics file. */
export async function writeCurvesSvg(svg: string, c: Curves, title = 'Training curves'): Promise<void> {
  const name = c.source === 'stdin' ? 'stdin' : basename(c.source)
  await writeChartFile(svg, curvesSvg(c, title, curvesTitle(c, name)))
}
