/**
 * The curves in a metrics NDJSON stream, as `span pretrain` and `span finetune` write it on stdout
 * (docs/formats.md#metrics-records): training records `{step, epoch, loss, mlm_loss, …, lr}` without a `split`,
 * evaluation records `{split: "eval" | "dev", step, …}` with losses (pre-training's held-out
 * set) or scores (SQuAD's exact_match/f1, GLUE's score/acc/…). Losses of both kinds make the
 * loss panel; the evaluation's other numbers make the metrics panel.
 */
import {errorAt, SpanError} from '../stream/errors.js'
import type {Source} from '../stream/lines.js'
import {readNdjson} from '../stream/ndjson.js'
import {maxOf, minOf} from '../util/arrays.js'

/** One curve: its points in step order. */
export interface Series {
  name: string
  key: string // the record's field: `eval loss` and `loss` share it, and so their colour
  split: string // 'train' or the evaluation's split
  points: Array<[number, number]> // [step, value]
}

export interface Panel {
  title: string
  yLabel: string
  series: Series[]
}

export interface Curves {
  source: string
  records: number // metrics records read (train and evaluation)
  panels: Panel[] // the loss panel first, then the evaluation metrics; only those with a curve
  steps: [number, number] // the first and last step of any point
}

/** Counts, sizes and thresholds an evaluation record carries beside its scores: not curves (GLUE's `score` repeats one of its metrics). */
const NOT_A_CURVE = new Set(['step', 'epoch', 'score', 'n', 'total', 'targets', 'tokens', 'examples', 'lr', 'grad_norm', 'tokens_per_s', 'seconds'])

export function isLossKey(key: string): boolean {
  return key === 'loss' || key.endsWith('_loss')
}

function isMetricKey(key: string): boolean {
  return !NOT_A_CURVE.has(key) && !isLossKey(key) && !key.endsWith('_total') && !key.includes('thresh')
}

/** Gathers records one by one (so a reader can stop at the first bad one) into the curves. */
export class CurveBuilder {
  private series = new Map<string, Series>()
  private losses: string[] = []
  private metrics: string[] = []
  private count = 0

  constructor(readonly source: string) {}

  /** Adds one parsed JSON object read at `line`; a stream header is skipped. */
  add(rec: Record<string, unknown>, line: number): void {
    if (rec.span === 'header') return
    const split = rec.split === undefined || rec.split === 'train' ? 'train' : rec.split
    if (typeof split !== 'string') throw errorAt(this.source, line, `"split" must be a string, got ${JSON.stringify(split)}`)
    const step = rec.step
    if (typeof step !== 'number' || !Number.isInteger(step) || step < 0) {
      throw errorAt(
        this.source,
        line,
        `expected a metrics record with an integer "step" ≥ 0 (from span pretrain or span finetune), ${step === undefined ? 'got a record without "step"' : `got ${JSON.stringify(step)}`}`,
      )
    }
    this.count++
    for (const [key, value] of Object.entries(rec)) {
      if (value === null || typeof value !== 'number') continue // null: no targets of that kind in the window
      if (!Number.isFinite(value)) throw errorAt(this.source, line, `"${key}" is not a finite number`)
      const wanted = isLossKey(key) || (split !== 'train' && isMetricKey(key))
      if (wanted) this.point(split, key, step, value)
    }
  }

  private point(split: string, key: string, step: number, value: number): void {
    const name = split === 'train' ? key : `${split} ${key}`
    let s = this.series.get(name)
    if (!s) {
      s = {name, key, split, points: []}
      this.series.set(name, s)
      ;(isLossKey(key) ? this.losses : this.metrics).push(name)
    }
    s.points.push([step, value])
  }

  /** The curves; an input without any is an error (it is not a metrics stream). */
  curves(): Curves {
    if (this.series.size === 0) {
      const what = this.count === 0 ? 'no metrics records' : `${this.count} records but no losses or evaluation scores`
      throw new SpanError(`${this.source}: ${what} (expected the metrics NDJSON of span pretrain or span finetune)`)
    }
    const pick = (names: string[]) => trainFirst(names.map((n) => this.series.get(n) as Series)).map(byStep)
    const evalSplits = [...new Set(this.metrics.map((n) => (this.series.get(n) as Series).split))]
    const panels: Panel[] = [
      {title: 'Loss', yLabel: 'loss', series: pick(this.losses)},
      {
        title: `Evaluation (${evalSplits.join(', ')})`,
        yLabel: this.metrics.every((n) => /(^|_)acc$/.test(n)) ? 'accuracy' : 'score',
        series: pick(this.metrics),
      },
    ].filter((p) => p.series.length > 0)
    const steps = panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x)))
    return {source: this.source, records: this.count, panels, steps: [minOf(steps), maxOf(steps)]}
  }
}

function trainFirst(series: Series[]): Series[] {
  return [...series.filter((s) => s.split === 'train'), ...series.filter((s) => s.split !== 'train')]
}

/** Points sorted by step (stable: a resumed run's repeated steps keep their order). */
function byStep(s: Series): Series {
  return {...s, points: [...s.points].sort((a, b) => a[0] - b[0])}
}

/** The curves of a metrics file or stdin; the first bad line is an error `source:line: …`. */
export async function readCurves(src: Source): Promise<Curves> {
  const b = new CurveBuilder(src.name)
  for await (const r of readNdjson(src)) b.add(r.value, r.line)
  return b.curves()
}

/** A colour index per series: its key's rank among the panel's keys, so `loss` and `eval loss` match. */
export function colorIndex(panel: Panel): number[] {
  const keys = [...new Set(panel.series.map((s) => s.key))]
  return panel.series.map((s) => keys.indexOf(s.key))
}
