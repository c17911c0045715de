import {Readable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {colorIndex, CurveBuilder, isLossKey, readCurves} from '../../../src/core/plot/curves.js'

/** Metrics as span pretrain writes them (train window, held-out eval, the final checkpoint line). */
const PRETRAIN = [
  {step: 2, epoch: 0, loss: 9, mlm_loss: 5, sbo_loss: 4, mlm_acc: 0.1, sbo_acc: 0.1, lr: 1e-3, grad_norm: 2, tokens_per_s: 100},
  {split: 'eval', step: 2, loss: 9.5, mlm_loss: 5.2, sbo_loss: 4.3, mlm_acc: 0.05, sbo_acc: 0.04, targets: 30, tokens: 200},
  {step: 4, epoch: 0, loss: 7, mlm_loss: 4, sbo_loss: null, mlm_acc: 0.2, sbo_acc: null, lr: 5e-4, grad_norm: 1, tokens_per_s: 120},
  {split: 'eval', step: 4, loss: 8, mlm_loss: 4.5, sbo_loss: 3.5, mlm_acc: 0.15, sbo_acc: 0.1, targets: 30, tokens: 200},
  {step: 4, checkpoint: '/tmp/m'},
]

function build(recs: object[]) {
  const b = new CurveBuilder('m.ndjson')
  recs.forEach((r, i) => b.add(r as Record<string, unknown>, i + 1))
  return b.curves()
}

const names = (c: ReturnType<typeof build>) => c.panels.map((p) => [p.title, p.series.map((s) => s.name)])

describe('CurveBuilder', () => {
  it('puts training and held-out losses in the loss panel, evaluation accuracies in the other', () => {
    const c = build(PRETRAIN)
    expect(names(c)).toEqual([
      ['Loss', ['loss', 'mlm_loss', 'sbo_loss', 'eval loss', 'eval mlm_loss', 'eval sbo_loss']],
      ['Evaluation (eval)', ['eval mlm_acc', 'eval sbo_acc']],
    ])
    expect(c.panels[0].series[2].points).toEqual([[2, 4]]) // null (no SBO targets in the window) is no point
    expect(c.panels[0].series[3].points).toEqual([
      [2, 9.5],
      [4, 8],
    ])
    expect([c.records, c.steps]).toEqual([5, [2, 4]])
    expect(c.panels.map((p) => p.yLabel)).toEqual(['loss', 'accuracy'])
  })

  it("reads finetune dev scores, leaving out counts, thresholds, GLUE's repeated score and flags", () => {
    const c = build([
      {step: 10, epoch: 1, loss: 3, lr: 1e-4},
      {split: 'dev', epoch: 1, step: 12, exact: 10, f1: 20, total: 42, HasAns_total: 20, best_f1: 22, best_f1_thresh: -1.5, best: true},
      {split: 'dev', epoch: 1, step: 12, n: 40, score: 0.5, acc: 0.5, f1: 0.4},
    ])
    expect(names(c)).toEqual([
      ['Loss', ['loss']],
      ['Evaluation (dev)', ['dev exact', 'dev f1', 'dev best_f1', 'dev acc']],
    ])
  })

  it('sorts a curve by step and gives `loss` and `eval loss` one colour', () => {
    const c = build([
      {step: 5, loss: 1, sbo_loss: 0.5},
      {step: 3, loss: 2},
      {split: 'eval', step: 4, loss: 1.5},
    ])
    expect(c.panels[0].series[0].points).toEqual([
      [3, 2],
      [5, 1],
    ])
    expect(colorIndex(c.panels[0])).toEqual([0, 1, 0])
  })

  it('skips a stream header and blank lines', async () => {
    const text = `{"span":"header","kind":"blocks"}\n\n{"step":1,"loss":2}\n`
    const c = await readCurves({name: 'x', stream: Readable.from([text])})
    expect(c.panels[0].series[0].points).toEqual([[1, 2]])
  })

  it('names the source and line of the first bad record', async () => {
    const read = (text: string) => readCurves({name: 'metrics.ndjson', stream: Readable.from([text])})
    await expect(read('{"step":1,"loss":2}\n{"step":2,"loss":\n')).rejects.toThrow(/^metrics\.ndjson:2: invalid JSON/)
    await expect(read('{"step":1,"loss":2}\n[1]\n')).rejects.toThrow(/^metrics\.ndjson:2: expected a JSON object$/)
    await expect(read('{"loss":2}\n')).rejects.toThrow(/^metrics\.ndjson:1: expected a metrics record with an integer "step"/)
    await expect(read('{"step":1.5,"loss":2}\n')).rejects.toThrow(/^metrics\.ndjson:1: .*"step"/)
    await expect(read('{"step":1,"split":3,"loss":2}\n')).rejects.toThrow(/^metrics\.ndjson:1: "split" must be a string/)
    await expect(read('')).rejects.toThrow(/^metrics\.ndjson: no metrics records/)
    await expect(read('{"step":1,"lr":0.1}\n')).rejects.toThrow(/^metrics\.ndjson: 1 records but no losses or evaluation scores/)
  })

  it('knows a loss key', () => {
    expect(['loss', 'mlm_loss', 'nsp_loss'].every(isLossKey)).toBe(true)
    expect(['losses', 'mlm_acc', 'lr'].some(isLossKey)).toBe(false)
  })
})

describe('TensorBoard event files', () => {
  it('reads the curves back from an event file, tags split/key', async () => {
    const {mkdtempSync, readdirSync, readFileSync, writeFileSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const {EventWriter} = await import('../../../src/core/train/tensorboard.js')
    const {eventRecords, isEventFile, readCurvesFile} = await import('../../../src/core/plot/files.js')
    const dir = mkdtempSync(join(tmpdir(), 'span-plot-tb-'))
    const w = await EventWriter.open(dir)
    for (const step of [1, 2, 3]) {
      w.scalar('train/loss', 4 - step, step)
      w.scalar('train/lr', 0.1, step)
    }
    w.scalar('dev/f1', 50, 3)
    w.scalar('dev/exact', 40, 3)
    await w.close()
    const path = join(dir, readdirSync(dir)[0])
    expect(isEventFile(path)).toBe(true)
    const c = await readCurvesFile(path)
    expect(names(c)).toEqual([
      ['Loss', ['loss']],
      ['Evaluation (dev)', ['dev f1', 'dev exact']],
    ])
    expect(c.panels[0].series[0].points).toEqual([
      [1, 3],
      [2, 2],
      [3, 1],
    ])
    expect(
      eventRecords([
        {
          wallTime: 0,
          step: 7,
          scalars: [
            {tag: 'loss', value: 1},
            {tag: 'eval/mlm/acc', value: 0.5},
          ],
        },
      ]),
    ).toEqual([
      {step: 7, loss: 1},
      {split: 'eval/mlm', step: 7, acc: 0.5},
    ])
    const bad = readFileSync(path)
    bad[bad.length - 3] ^= 1
    writeFileSync(path, bad)
    await expect(readCurvesFile(path)).rejects.toThrow(new RegExp(`^${path.replace(/[.\\/]/g, '\\$&')}: record 9 at byte \\d+: data CRC mismatch`))
  })
})
