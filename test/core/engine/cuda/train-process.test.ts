import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// Issue 20's process checks on the stand-in device: 20 steps of a `tiny`-shaped pretrain and of
// `finetune squad` give `--backend native`'s losses at fp32 (dropout on: the fused kernels draw
// native's masks), and over 100 steps the tensor count and the allocator's live bytes
// (SPAN_DEBUG_TENSORS=1: `tensors after step N: M, device bytes B`) stay flat.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const env = (extra: Record<string, string> = {}) => ({...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, ...extra})
const out = () => join(mkdtempSync(join(tmpdir(), 'span-cuda-train-')), 'run')

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

const pretrainArgs = (steps: number) => [
  'pretrain',
  '--preset',
  'tiny',
  '--layers',
  '1',
  '--hidden',
  '16',
  '--heads',
  '2',
  '--batch-size',
  '2',
  '--max-steps',
  String(steps),
  '--log-every',
  '1',
]
// 2 windows a step: --max-train-examples 2 × steps windows of 32 tokens from fixtures/squad-demo
const squadArgs = (steps: number) => [
  ...['finetune', 'squad', '--preset', 'tiny', '--train', 'fixtures/squad-demo/train.json', '--max-len', '32', '--max-query-len', '8', '--doc-stride', '16'],
  ...['--batch-size', '2', '--max-train-examples', String(2 * steps), '--epochs', '1', '--log-every', '1'],
]

function run(args: string[], backend: string, input = '', extra: Record<string, string> = {}): {losses: number[]; census: [number, number][]} {
  const r = runSpan([...args, '--backend', backend, '--out', out()], {input, env: env(extra)})
  expect(r.code, r.stderr).toBe(0)
  const losses = r.stdout
    .split('\n')
    .filter((l) => l.includes('"loss"'))
    .map((l) => (JSON.parse(l) as {loss: number}).loss)
  const census = [...r.stderr.matchAll(/tensors after step \d+: (\d+), device bytes (\d+)$/gm)].map((m) => [Number(m[1]), Number(m[2])] as [number, number])
  return {losses, census}
}

function sameLosses(args: string[], input = ''): void {
  const [native, cuda] = [run(args, 'native', input), run(args, 'cuda', input)]
  expect(native.losses).toHaveLength(20)
  expect(cuda.losses).toHaveLength(20)
  cuda.losses.forEach((l, i) => expect(Math.abs(l - native.losses[i]) / native.losses[i], `step ${i + 1}`).toBeLessThan(1e-4))
}

function flat(census: [number, number][]): void {
  expect(census).toHaveLength(100)
  expect(census[1][1]).toBeGreaterThan(0)
  for (const [i, c] of census.entries()) if (i > 0) expect(c, `step ${i + 1}`).toEqual(census[1]) // step 1 creates the moments
}

describe.skipIf(skip)('training on --backend cuda (stand-in) as processes', () => {
  it('20 steps of a tiny pretrain give native’s losses', () => sameLosses(pretrainArgs(20), masked()), 120_000)

  it('20 steps of finetune squad give native’s losses', () => sameLosses(squadArgs(20)), 180_000)

  it(
    'pretrain: tensors and live device bytes flat over 100 steps',
    () => flat(run(pretrainArgs(100), 'cuda', masked(), {SPAN_DEBUG_TENSORS: '1'}).census),
    180_000,
  )

  it(
    'finetune squad: tensors and live device bytes flat over 100 steps',
    () => flat(run(squadArgs(100), 'cuda', '', {SPAN_DEBUG_TENSORS: '1'}).census),
    300_000,
  )
})
