import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {runSelftest, selftestTable} from '../../../../src/core/engine/cuda/selftest.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// `span doctor --selftest` (issue 20) on the stand-in device: passes through bin/run.js (exit 0,
// every kernel, the bf16 tensor-core attention and the tiny step in the table); a planted wrong kernel (Neg computing Abs) fails
// it in-process; without the stand-ins it says why in one line, exit 1.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

describe.skipIf(skip)('span doctor --selftest on the stand-in device', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('passes through bin/run.js: every kernel and the tiny step ok, exit 0', async () => {
    const r = runSpan(['doctor', '--selftest', '--backend', 'cuda'], {env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir}})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^SpanAttentionGrad +\d+ +\S+ +ok$/m)
    expect(r.stdout).toMatch(/^tiny step \(loss \+ \d+ grads; worst \S+\) +1 +\S+ +ok$/m)
    expect(r.stdout).toMatch(/^cuda graph \(fwd\+bwd ×3: warm-up, captured, replayed\) +3 +\S+ +ok$/m) // selftest-graph.ts
    expect(r.stdout).toMatch(/^tensor-core attention \(bf16, d 16 and 64, fwd\+bwd; ≤ 0\.02\) +2 +\S+ +ok$/m) // selftest-wmma.ts
    expect(r.stdout).toMatch(/selftest: all \d+ passed/)
  }, 120_000)

  it('without a cuda device: one line saying why, exit 1', async () => {
    const r = runSpan(['doctor', '--selftest'], {env: {...process.env, SPAN_CUDA_LIBS: '/nonexistent-span-standins'}})
    expect(r.code).toBe(1)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(/^span doctor: --backend cuda is not available: /)
  }, 60_000)

  it('a planted wrong kernel (Neg computing Abs) fails it', async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
    const abs = tf.getKernel('Abs', 'cuda')!
    tf.unregisterKernel('Neg', 'cuda')
    tf.registerKernel({kernelName: 'Neg', backendName: 'cuda', kernelFunc: abs.kernelFunc})
    const report = await runSelftest()
    expect(report.ok).toBe(false)
    expect(report.rows.find((r) => r.kernel === 'Neg')?.ok).toBe(false)
    expect(report.step.ok).toBe(true)
    expect(selftestTable(report)).toMatch(/^Neg .* FAIL$/m)
  }, 120_000)
})
