// TensorBoard reads span's --tensorboard event files (issue 34): its EventAccumulator (the loader of
// the scalar dashboard, test/interop/py/tb.py in the venv of tools/interop-env.sh) on the files of a
// `span pretrain` with evaluation and of a `span finetune glue` with dev evaluation finds exactly the
// scalars the metrics NDJSON says span wrote: every numeric field but step/epoch/best of each
// train/eval/dev record as `<split>/<field>` at the record's step, float32 as TensorBoard keeps it,
// and nothing else (no other tag, no image, histogram, tensor or graph). A copy of the pretrain
// file with one record's CRC broken is shown to fail the same comparison (the accumulator stops
// at a record it cannot trust).
import {copyFileSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {lacking, python, titled, version} from '../helpers/interop.js'
import {runSpan} from '../helpers/spawn.js'
import {writeBlocks} from '../core/train/helpers.js'

const why = lacking('tensorboard')
const tmp = mkdtempSync(join(tmpdir(), 'span-interop-tb-'))
type Scalars = Record<string, [number, number][]>
interface Read {
  scalars: Scalars
  other: Record<string, unknown>
}
const runs: Record<string, {expected: Scalars; read: Read; dir: string}> = {}

/** The scalars a metrics NDJSON says span wrote (metrics.ts openScalars), float32 as TensorBoard stores them. */
export function expectedScalars(ndjson: string): Scalars {
  const out: Scalars = {}
  for (const line of ndjson.trim().split('\n')) {
    const rec = JSON.parse(line) as Record<string, unknown>
    if (typeof rec.step !== 'number') continue
    const prefix = typeof rec.split === 'string' ? rec.split : 'train'
    for (const [k, v] of Object.entries(rec)) {
      if (typeof v !== 'number' || !Number.isFinite(v) || ['step', 'epoch', 'best'].includes(k)) continue
      ;(out[`${prefix}/${k}`] ??= []).push([rec.step, Math.fround(v)])
    }
  }
  return out
}

const readTb = (dir: string): Read => JSON.parse(python('tb.py', [dir])) as Read
const sorted = (s: Scalars): Scalars =>
  Object.fromEntries(
    Object.keys(s)
      .sort()
      .map((k) => [k, s[k]]),
  )

/** Breaks the data CRC of the n-th TFRecord of an event file copied into a folder of its own. */
function withBadCrc(file: string, n: number): string {
  const dir = mkdtempSync(join(tmp, 'bad-crc-'))
  const copy = join(dir, file.split('/').pop()!)
  copyFileSync(file, copy)
  const b = readFileSync(copy)
  let at = 0
  for (let i = 0; i < n; i++) at += 8 + 4 + Number(b.readBigUInt64LE(at)) + 4 // length, its CRC, data, data CRC
  const crcAt = at + 12 + Number(b.readBigUInt64LE(at))
  b[crcAt] ^= 0x01
  writeFileSync(copy, b)
  return dir
}

beforeAll(() => {
  if (why) return
  const train = join(tmp, 'train.ndjson')
  const dev = join(tmp, 'dev.ndjson')
  writeBlocks(train, 12, 1)
  writeBlocks(dev, 4, 2)
  const tiny = ['--preset', 'tiny', '--seed', '3', '--batch-size', '2', '--log-every', '1']
  const pre = runSpan([
    'pretrain',
    train,
    ...tiny,
    '--max-steps',
    '4',
    '--eval',
    dev,
    '--eval-every',
    '2',
    '--tensorboard',
    join(tmp, 'tb-pre'),
    '--out',
    join(tmp, 'pre'),
  ])
  expect(pre.code, pre.stderr).toBe(0)
  const sst = join(tmp, 'sst.tsv')
  writeFileSync(
    sst,
    'sentence\tlabel\n' +
      ['a fine film .', 'the worst film .', 'it is good', 'nothing happens .', 'a great story', 'bad and long'].map((s, i) => `${s}\t${i % 2}\n`).join(''),
  )
  const ft = runSpan([
    'finetune',
    'glue',
    '--task',
    'sst2',
    '--train',
    sst,
    '--dev',
    sst,
    ...tiny,
    '--epochs',
    '2',
    '--max-len',
    '16',
    '--eval-every',
    '2',
    '--tensorboard',
    join(tmp, 'tb-ft'),
    '--out',
    join(tmp, 'ft'),
  ])
  expect(ft.code, ft.stderr).toBe(0)
  for (const [name, r, dir] of [
    ['pretrain', pre, join(tmp, 'tb-pre')],
    ['finetune', ft, join(tmp, 'tb-ft')],
  ] as const) {
    runs[name] = {expected: expectedScalars(r.stdout), read: readTb(dir), dir}
  }
}, 600_000)

describe.skipIf(why !== null)(titled(`TensorBoard (${version('tensorboard')}) EventAccumulator on span's --tensorboard files`, why), () => {
  it.each(['pretrain', 'finetune'])('%s: every tag, step and value of the metrics NDJSON, and nothing else', (name) => {
    const {expected, read} = runs[name]
    const splits = new Set(Object.keys(expected).map((t) => t.split('/')[0]))
    expect(splits).toEqual(new Set(name === 'pretrain' ? ['train', 'eval'] : ['train', 'dev'])) // evaluations are there
    expect(read.other).toEqual({})
    expect(sorted(read.scalars)).toEqual(sorted(expected))
  })

  it('one record with a bad CRC: the accumulator stops there and the comparison fails', () => {
    const {dir, expected} = runs.pretrain
    const file = join(dir, readdirSync(dir)[0])
    const read = readTb(withBadCrc(file, 3)) // record 0 is the file_version event
    const n = (s: Scalars) => Object.values(s).reduce((k, v) => k + v.length, 0)
    expect(n(read.scalars)).toBeLessThan(n(expected))
    expect(sorted(read.scalars)).not.toEqual(sorted(expected))
  })
})
