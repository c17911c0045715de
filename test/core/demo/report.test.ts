import {describe, expect, it} from 'vitest'
import {curvesSection, duration, eraRow, eraTable, learnedTable, pretrainRow, resultsTable, squadRow} from '../../../src/core/demo/report.js'
import {CurveBuilder} from '../../../src/core/plot/curves.js'

function build(recs: object[]) {
  const b = new CurveBuilder('m.ndjson')
  recs.forEach((r, i) => b.add(r as Record<string, unknown>, i + 1))
  return b.curves()
}

const PRETRAIN = build([
  {step: 50, epoch: 0, loss: 15.4, mlm_loss: 7.7, sbo_loss: 7.7, lr: 1e-3},
  {split: 'eval', step: 50, loss: 13.68, mlm_loss: 6.8, sbo_loss: 6.9},
  {step: 100, epoch: 1, loss: 12.86, mlm_loss: 6.4, sbo_loss: 6.4, lr: 0},
  {split: 'eval', step: 100, loss: 13.661, mlm_loss: 6.8, sbo_loss: 6.86},
  {step: 100, checkpoint: '/tmp/m'},
])
const SQUAD = build([
  {step: 24, loss: 3.1},
  {split: 'dev', step: 24, exact: 0, f1: 3.57},
  {step: 72, loss: 2},
  {split: 'dev', step: 72, exact: 0, f1: 3.73},
])

describe('demo report', () => {
  it('writes durations as a person reads them', () => {
    expect([duration(0.44), duration(9.96), duration(48.2), duration(112), duration(3600)]).toEqual(['0.4s', '10.0s', '48s', '1m 52s', '60m 00s'])
  })

  it('tabulates the last training and held-out loss, SQuAD as a pipeline check, and the times', () => {
    const rows = [pretrainRow(PRETRAIN, 'tiny', 112), squadRow(SQUAD, 3, {exact_match: 0, f1: 3.7263794}, 70.4)]
    expect(resultsTable(rows, 219.4)).toEqual([
      '  stage                      run                  result                                time',
      '  pre-training (MLM + SBO)   tiny, 100 steps      loss 12.86, held-out 13.66            1m 52s',
      '  SQuAD pipeline check       3 epochs, 72 steps   ran end to end (dev EM 0.0, F1 3.7)   1m 10s',
      '  whole demo                                                                            3m 39s',
    ])
    expect(squadRow(SQUAD, 1, {exact_match: 50, f1: 60}, 1).what).toBe('1 epoch, 72 steps')
  })

  it('ends on what the model learned: its held-out figures beside the unigram baseline', () => {
    const model = {mlm: {crossEntropy: 6.2, accuracy: 0.091, targets: 340}, sbo: {crossEntropy: 6.5, accuracy: 0.06, targets: 340}, step: 200}
    const unigram = {mlm: {crossEntropy: 6.6009, accuracy: 0.0323, targets: 340}, sbo: {crossEntropy: 6.627, accuracy: 0.035, targets: 313}}
    const table = learnedTable(model, unigram, 20, 6748)
    expect(table.slice(0, 5)).toEqual([
      'pre-training, held out: the 340 masked tokens of the 20 held-out examples after 200 steps',
      '                                    uniform guess              tiny model                 token frequencies',
      '                                    cross-entropy   accuracy   cross-entropy   accuracy   cross-entropy   accuracy',
      '  masked tokens (MLM head)                   8.82      0.01%            6.20       9.1%            6.60       3.2%',
      '  from span boundaries (SBO head)            8.82      0.01%            6.50       6.0%            6.63       3.5%',
    ])
    expect(table[5]).toMatch(/^ {2}\(cross-entropy in nats, lower is better\. A uniform guess over the vocabulary is where the untrained model starts/)
    expect(learnedTable({...model, sbo: null}, unigram, 20, 6748)).toHaveLength(7) // mlm only
  })

  it('ends on the era task: the dev accuracy beside the majority class', () => {
    expect(eraRow(SQUAD, 3, 0.7303, 20).result).toBe('dev accuracy 73.0% (majority class 50.0%)')
    expect(eraTable(102, 149 / 204, 3)).toEqual([
      'what the tiny model learned: was a sentence spoken before 1910 or after? (102 sentences of the 1862 address, 102 of the end of the 2016 one; neither run saw them)',
      '                                                     dev accuracy',
      '  majority class (the trivial baseline)               50.0%   102 of 204',
      '  tiny model, pre-trained then fine-tuned  3 epochs   73.0%   149 of 204',
      '  (fine-tuned on as many sentences of the 1790, 1801, 1823 and 1901 addresses as of 1913 to 2000; span predict glue',
      '  and span eval glue scored it)',
    ])
  })

  it('says when a run logged no loss', () => {
    expect(pretrainRow(build([{split: 'eval', step: 4, mlm_acc: 0.1}]), 'tiny', 1).result).toBe('no loss logged')
  })

  it("heads each run's curves with its metrics file and chart", () => {
    const lines = curvesSection('pre-training', PRETRAIN, {metrics: 'pretrain-metrics.ndjson', svg: 'pretrain-curves.svg'}, false)
    expect(lines.slice(0, 3)).toEqual(['', 'pre-training  (pretrain-metrics.ndjson; drawn to pretrain-curves.svg)', '  Loss'])
    expect(lines).not.toContain('  Evaluation (eval)') // held-out losses only: they share the loss panel
  })
})
