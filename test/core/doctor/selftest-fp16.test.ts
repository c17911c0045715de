import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import type {CudaBackend} from '../../../src/core/engine/cuda/backend.js'
import {kernelRows} from '../../../src/core/doctor/selftest.js'
import {fp16Cases} from '../../../src/core/doctor/selftest-fp16.js'
import {buildStandins} from '../../helpers/cuda-standins.js'
import {runSpan} from '../../helpers/spawn.js'

// `span doctor --selftest`'s fp16 rows (issue 35, selftest-fp16.ts) on the stand-in device against
// native: both pass (and print through bin/run.js); with loss_scale.cu's launch dropped (no unscaling, no skip) the overflow row
// fails and names itself; with cast_f16.cu's launch dropped the fp16 row does.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

/** The fp16 rows against native, with the cuda backend's launches of kernel `fn` (if any) skipped. */
async function rows(fn: string | null) {
  process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
  await initBackend('native')
  const reference = tf.getBackend()
  await initBackend('cuda', {precision: 'fp32'})
  const b = tf.engine().findBackend('cuda') as unknown as CudaBackend & {launch: (...a: unknown[]) => void}
  const launch = b.launch
  if (fn)
    b.launch = function (this: CudaBackend, ...a: unknown[]) {
      if (a[1] !== fn) launch.apply(this, a as Parameters<typeof launch>)
    }
  try {
    const failed: string[] = []
    const r = await kernelRows(reference, failed, fp16Cases())
    return {rows: r.filter((x) => x.kernel.startsWith('fp16 GEMM') || x.kernel.startsWith('loss_scale.cu')), failed}
  } finally {
    delete (b as Partial<typeof b>).launch
  }
}

describe.skipIf(skip)('doctor --selftest fp16 rows on the stand-in device', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('span doctor --selftest prints both rows, ok', () => {
    const r = runSpan(['doctor', '--selftest', '--backend', 'cuda'], {env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir}})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^fp16 GEMM \+ cast_f16\.cu \(fp32 accumulation\) +1 +\S+ +ok$/m)
    expect(r.stdout).toMatch(/^loss_scale\.cu \(overflow skips the step, scale ½ then ×2\) +1 +\S+ +ok$/m)
  }, 120_000)

  it('the fp16 products and the overflow-and-skip row pass', async () => {
    const r = await rows(null)
    expect(r.failed).toEqual([])
    expect(r.rows.map((x) => [x.kernel, x.cases, x.ok])).toEqual([
      ['fp16 GEMM + cast_f16.cu (fp32 accumulation)', 1, true],
      ['loss_scale.cu (overflow skips the step, scale ½ then ×2)', 1, true],
    ])
  }, 120_000)

  it('without loss_scale.cu the overflow row fails, naming itself', async () => {
    const r = await rows('span_loss_scale_step')
    expect(r.rows.find((x) => x.kernel.startsWith('loss_scale.cu'))?.ok).toBe(false)
    expect(r.failed).toEqual([expect.stringMatching(/^fp16 loss scaling: /)])
  }, 120_000)

  it('without cast_f16.cu the fp16 row fails', async () => {
    const r = await rows('span_f32_to_f16')
    expect(r.rows.find((x) => x.kernel.startsWith('fp16 GEMM'))?.ok).toBe(false)
  }, 120_000)
})
