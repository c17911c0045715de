/** The metrics file in, the SVG file out: what `span plot` and `span demo` both do. */
import {basename} from 'node:path'
import {writeChartFile} from '../data/chart-file.js'
import {SpanError} from '../stream/errors.js'
import {openSource} from '../stream/lines.js'
import {EventFileError, readEvents, type TbEvent} from '../train/tensorboard.js'
import {CurveBuilder, readCurves, type Curves} from './curves.js'
import {curvesSvg, curvesTitle} from './svg.js'

/** A TensorBoard event file, by TensorBoard's own test: `tfevents` in its name. */
export function isEventFile(path: string): boolean {
  return basename(path).includes('tfevents')
}

/** The curves of a metrics NDJSON file (`-`: stdin) or of a TensorBoard event file. */
export async function readCurvesFile(path: string): Promise<Curves> {
  if (!isEventFile(path)) return readCurves(await openSource(path))
  const events = await readEvents(path).catch((err: unknown) => {
    if (err instanceof EventFileError) throw new SpanError(err.message)
    const code = (err as {code?: string}).code
    if (code === 'ENOENT' || code === 'EISDIR') throw new SpanError(`${path}: ${code === 'ENOENT' ? 'no such file' : 'is a directory'}`)
    throw err
  })
  const b = new CurveBuilder(path)
  eventRecords(events).forEach((rec, i) => b.add(rec, i + 1))
  return b.curves()
}

/**
 * Metrics records from TensorBoard scalars, one per split and step: a tag `split/key` (`train/loss`,
 * `dev/f1`) is the field `key` of that split's record, a tag without `/` a training field.
 */
export function eventRecords(events: TbEvent[]): Array<Record<string, unknown>> {
  const records = new Map<string, Record<string, unknown>>()
  for (const e of events) {
    for (const {tag, value} of e.scalars) {
      const cut = tag.lastIndexOf('/')
      const split = cut < 0 ? 'train' : tag.slice(0, cut)
      const id = `${split}\n${e.step}`
      if (!records.has(id)) records.set(id, split === 'train' ? {step: e.step} : {split, step: e.step})
      ;(records.get(id) as Record<string, unknown>)[tag.slice(cut + 1)] = value
    }
  }
  return [...records.values()]
}

/** Draws the curves to `svg`, whole or not at all; the subtitle names the metrics file. */
export async function writeCurvesSvg(svg: string, c: Curves, title = 'Training curves'): Promise<void> {
  const name = c.source === 'stdin' ? 'stdin' : basename(c.source)
  await writeChartFile(svg, curvesSvg(c, title, curvesTitle(c, name)))
}
