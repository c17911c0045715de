// --dropout R (issue 14) on pretrain and finetune: the rate the model's hidden and attention
// dropout run with, saved in the checkpoint's config.json.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-dropout-'))

function span(args: string[]) {
  const r = spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const hf = (dir: string) => JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'))
const losses = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
    .filter((r) => 'loss' in r)
    .map((r) => r.loss as number)

describe('--dropout', () => {
  const train = join(tmp, 'train.ndjson')
  const args = (out: string, _unused: string, rest: string[]) => [
    'pretrain',
    train,
    '--preset',
    'tiny',
    '--layers',
    '1',
    '--hidden',
    '16',
    '--heads',
    '2',
    '--batch-size',
    '4',
    '--max-steps',
    '2',
    '--log-every',
    '1',
    '--backend',
    'wasm',
    '--seed',
    '1',
    '--out',
    join(tmp, out),
    ...rest,
  ]

  it("pretrain: 0 turns dropout off (saved in config.json); the default keeps the preset's 0.1", () => {
    writeBlocks(train, 12, 2)
    const off = span(args('off', '', ['--dropout', '0']))
    const on = span(args('on', '', []))
    expect(off.code, off.stderr).toBe(0)
    expect(on.code, on.stderr).toBe(0)
    expect(hf(join(tmp, 'off', 'checkpoint-2'))).toMatchObject({hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})
    expect(hf(join(tmp, 'on', 'checkpoint-2'))).toMatchObject({hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1})
    expect(JSON.parse(readFileSync(join(tmp, 'off', 'checkpoint-2', 'train_config.json'), 'utf8')).dropout).toBe(0)
    expect(losses(off.stdout)[0]).not.toBe(losses(on.stdout)[0]) // same init and batch, only dropout differs
  })

  it('pretrain refuses a rate outside [0, 1)', () => {
    const r = span(args('bad', '', ['--dropout', '1.5']))
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/--dropout[\s\S]*expected a number in \[0, 0\.999\], got 1\.5/)
  })

  it('finetune glue: the fine-tuned model runs and is saved with the rate', () => {
    const tsv = join(tmp, 'sst2.tsv')
    writeFileSync(
      tsv,
      'sentence\tlabel\n' +
        ['a fine film', 'dull and slow', 'warm , funny', 'no wit at all', 'a gem', 'bad'].map((s, i) => `${s}\t${i % 2 === 0 ? 1 : 0}`).join('\n') +
        '\n',
    )
    const out = join(tmp, 'ft')
    const r = span([
      'finetune',
      'glue',
      '--task',
      'sst-2',
      '--preset',
      'tiny',
      '--train',
      tsv,
      '--out',
      out,
      '--max-len',
      '16',
      '--batch-size',
      '3',
      '--epochs',
      '1',
      '--backend',
      'wasm',
      '--dropout',
      '0.25',
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(hf(join(out, 'best'))).toMatchObject({hidden_dropout_prob: 0.25, attention_probs_dropout_prob: 0.25})
  })
})
