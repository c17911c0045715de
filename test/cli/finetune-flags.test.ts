// settleResumed (issue 24.4): a resumed finetune run's saved finetune_config.json supplies every
// flag the user did not type; a typed one must agree (run control excepted); casing and the
// model it started from (--init or --preset) come back too.
import {describe, expect, it} from 'vitest'
import {settleResumed} from '../../src/cli/finetune-flags.js'

const saved = {
  task: 'SST-2',
  init: 'preset:tiny',
  train: '/data/train.tsv',
  dev: null,
  cased: false,
  epochs: 2,
  lr: 2e-5,
  'batch-size': 4,
  keep: 3,
  'eval-every': null,
  'span-ft-padding': 0,
}
const names = [
  'task',
  'init',
  'preset',
  'train',
  'dev',
  'cased',
  'uncased',
  'epochs',
  'lr',
  'batch-size',
  'keep',
  'eval-every',
  'span-ft-padding',
  'stop-at',
  'resume',
]

describe('settleResumed', () => {
  it('fills every flag not typed from the saved run, defaults included (a default is not "given")', () => {
    const f: Record<string, unknown> = {epochs: 3, lr: 5e-5, 'batch-size': 32, keep: 1, resume: 'run'}
    settleResumed(f, new Set(['resume']), saved, 'run/checkpoint-4', names)
    expect(f).toMatchObject({
      task: 'SST-2',
      preset: 'tiny',
      train: '/data/train.tsv',
      dev: undefined,
      epochs: 2,
      lr: 2e-5,
      'batch-size': 4,
      keep: 3,
      cased: false,
      uncased: true,
    })
    expect(f['eval-every']).toBeUndefined()
  })

  it('takes a typed value that agrees (a task name in any spelling, a number as text); run control may change', () => {
    const f: Record<string, unknown> = {task: 'sst2', epochs: 2, 'span-ft-padding': '0', keep: 1}
    settleResumed(f, new Set(['task', 'epochs', 'span-ft-padding', 'keep']), saved, 'run', names)
    expect(f.keep).toBe(1)
  })

  it('refuses a typed value that differs, in one line naming the flag, both values and the run (exit 2)', () => {
    const at = (f: Record<string, unknown>, typed: string[]) => () => settleResumed(f, new Set(typed), saved, 'run/checkpoint-4', names)
    expect(at({epochs: 3}, ['epochs'])).toThrow('--epochs 3 differs from the run in run/checkpoint-4 (2); leave it out to continue the run as it was')
    expect(at({preset: 'mini'}, ['preset'])).toThrow(/--preset "mini" differs from the run in run\/checkpoint-4 \("tiny"\)/)
    expect(at({init: '/elsewhere'}, ['init'])).toThrow(/--init "\/elsewhere" differs/)
    expect(at({cased: true}, ['cased'])).toThrow(/--cased true differs .* \("uncased"\)/)
    try {
      at({lr: 1e-3}, ['lr'])()
    } catch (err) {
      expect((err as {exitCode?: number}).exitCode).toBe(2)
    }
  })

  it('leaves --train and --dev typed again to the SHA-256 check, and never fills what is not a setting', () => {
    const f: Record<string, unknown> = {train: '/moved/train.tsv', 'stop-at': 5}
    settleResumed(f, new Set(['train', 'stop-at']), {...saved, 'stop-at': 1}, 'run', names)
    expect(f).toMatchObject({train: '/moved/train.tsv', 'stop-at': 5})
  })
})
