// The fine-tuning loop's run control as a user drives it (dist/ must be built), for SQuAD and
// GLUE: a run stopped with --stop-at and continued with --resume ends byte for byte where the
// uninterrupted run ends (weights and optimiser moments), with accumulation, dropout,
// --group-by-length and --eval-every on; --keep rotates checkpoint-STEP/ directories.
import {spawnSync} from 'node:child_process'
import {readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {qas, squad} from './squad-fixture.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-finetune-resume-'))
const ckpt = join(tmp, 'pre')

function span(args: string[]) {
  const r = spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}
const records = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
const bytes = (dir: string, f: string) => readFileSync(join(dir, f))

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  writeFileSync(join(tmp, 'train.json'), squad([...qas, ...qas.map((q) => ({...q, id: `${q.id}b`}))]))
  const rows = ['a good film', 'a bad film', 'good and fun', 'bad and dull', 'very good', 'very bad', 'good good', 'bad bad', 'so good', 'so bad']
  writeFileSync(join(tmp, 'd.txt'), 'a good\t3\ngood and fun\t2\nso bad\t2\n')
  writeFileSync(join(tmp, 'train.tsv'), ['sentence\tlabel', ...rows.map((t, i) => `${t}\t${1 - (i % 2)}`)].join('\n') + '\n')
})

const tasks: [string, string[]][] = [
  [
    'squad',
    ['finetune', 'squad', '--train', join(tmp, 'train.json'), '--dev', join(tmp, 'train.json'), '--max-len', '32', '--doc-stride', '8', '--max-query-len', '8'],
  ],
  ['glue', ['finetune', 'glue', '--task', 'sst2', '--train', join(tmp, 'train.tsv'), '--dev', join(tmp, 'train.tsv'), '--max-len', '16']],
  // Span Fine-tuning with the random segmentation: the seeded shuffle of span lengths is the same on resume
  [
    'glue --span-ft --segmentation random',
    [
      'finetune',
      'glue',
      '--task',
      'sst2',
      '--train',
      join(tmp, 'train.tsv'),
      '--dev',
      join(tmp, 'train.tsv'),
      '--max-len',
      '16',
      '--span-ft',
      '--dict',
      join(tmp, 'd.txt'),
    ].concat(['--segmentation', 'random', '--max-spans', '6', '--max-span-tokens', '4']),
  ],
]

describe.each(tasks)('span finetune %s: --stop-at, --resume, --keep', (_task, cmd) => {
  const common = [
    ...cmd,
    '--init',
    ckpt,
    '--epochs',
    '2',
    '--batch-size',
    '2',
    '--accumulate',
    '2',
    '--lr',
    '1e-3',
    '--log-every',
    '1',
    '--group-by-length',
    '--eval-every',
    '2',
    '--backend',
    'wasm',
  ]

  it('stopped at step 3 and resumed, ends byte for byte as the uninterrupted run', () => {
    const whole = span([...common, '--keep', '2', '--out', join(tmp, `${_task}-whole`)])
    expect(whole.code, whole.stderr).toBe(0)
    const recs = records(whole.stdout)
    const last = recs.filter((r) => r.checkpoint).at(-1) as {step: number; checkpoint: string}
    expect(last.step).toBeGreaterThan(4)
    // --keep 2: only the two newest checkpoint-STEP/ remain, and best/, and the list of the run's own (span-run.json)
    const saved = recs.filter((r) => r.checkpoint).map((r) => r.step as number)
    const left = readdirSync(join(tmp, `${_task}-whole`)).sort()
    expect(left).toEqual(['best', ...saved.slice(-2).map((s) => `checkpoint-${s}`), 'span-run.json'].sort())

    const part = join(tmp, `${_task}-part`)
    const first = span([...common, '--stop-at', '3', '--out', part])
    expect(first.code, first.stderr).toBe(0)
    expect(records(first.stdout).at(-1)).toEqual({step: 3, checkpoint: join(part, 'checkpoint-3')})
    const rest = span([...common, '--resume', part, '--out', part])
    expect(rest.code, rest.stderr).toBe(0)
    expect(rest.stderr).toMatch(/resuming at step 3/)
    const later = (text: string) =>
      records(text)
        .filter((r) => (r.step as number) > 3 && !r.checkpoint)
        .map((r) => ({...r, tokens_per_s: 0}))
    expect(later(rest.stdout)).toEqual(later(whole.stdout))
    const end = `checkpoint-${last.step}`
    for (const f of ['model.safetensors', 'optimizer.safetensors', 'trainer_state.json']) {
      expect(bytes(join(part, end), f).equals(bytes(last.checkpoint, f)), f).toBe(true)
    }
    expect(bytes(join(part, 'best'), 'model.safetensors').equals(bytes(join(tmp, `${_task}-whole`, 'best'), 'model.safetensors'))).toBe(true)
  })

  it('a resumed run keeps its settings: another --batch-size is a one-line error', () => {
    const other = [...common]
    other[other.indexOf('--batch-size') + 1] = '3'
    const r = span([...other, '--resume', join(tmp, `${_task}-part`), '--out', join(tmp, `${_task}-x`)])
    expect(r.code).toBe(2)
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/--batch-size 3 differs from the run in .* \(2\); leave it out to continue the run as it was$/),
    ])
  })
})
