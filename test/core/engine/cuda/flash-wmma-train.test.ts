import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// A `tiny`-shaped pretrain at --precision bf16 through bin/run.js on the stand-in device whose heads
// are 16 wide, so that its attention takes the tensor-core kernels (flash_attention_wmma.cu; the
// tiny preset of bf16-train.test.ts has 8-wide heads, which keep the FMA kernels): a few steps end
// within 2% of native's fp32 losses, and differ from the same run with the tensor-core attention
// switched off (SPAN_CUDA_TENSOR_CORE_ATTENTION=0: the FMA kernels, P in fp32), which shows they ran.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const STEPS = 5

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '24'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong and the river runs past the old mill\n',
  )
}

function losses(backend: string, input: string, extra: string[], env: Record<string, string> = {}): number[] {
  const args = ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '32', '--heads', '2', '--batch-size', '2', '--log-every', '1']
  const dir = join(mkdtempSync(join(tmpdir(), 'span-wmma-train-')), 'run')
  const r = runSpan([...args, '--max-steps', String(STEPS), '--backend', backend, ...extra, '--out', dir], {
    input,
    env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, ...env},
  })
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
    .split('\n')
    .filter((l) => l.includes('"loss"'))
    .map((l) => (JSON.parse(l) as {loss: number}).loss)
}

describe.skipIf(skip)('tensor-core attention in a bf16 pretrain on the stand-in device (bin/run.js)', () => {
  it(`${STEPS} steps of a tiny pretrain with 16-wide heads: within 2% of fp32, and not the FMA kernels' losses`, () => {
    const input = masked()
    const fp32 = losses('native', input, [])
    const wmma = losses('cuda', input, ['--precision', 'bf16'])
    const fma = losses('cuda', input, ['--precision', 'bf16'], {SPAN_CUDA_TENSOR_CORE_ATTENTION: '0'})
    expect(wmma).toHaveLength(STEPS)
    wmma.forEach((l, i) => expect(Math.abs(l - fp32[i]) / fp32[i], `step ${i + 1}`).toBeLessThan(0.02))
    expect(wmma).not.toEqual(fma)
  }, 180_000)
})
