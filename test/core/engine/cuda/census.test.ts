import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {recordKernels} from '../../../../src/core/engine/cuda/census.js'
import {CUDA_ALIAS_KERNELS, CUDA_FUSED_KERNELS, CUDA_KERNELS, CUDA_STANDARD_KERNELS, KERNEL_CENSUS} from '../../../../src/core/engine/cuda/registry.js'
import {loadNative} from '../../../../src/core/engine/native.js'
import {kernelCensus} from '../../../../tools/kernel-census.js'

// The kernel registry of the cuda backend (src/core/engine/cuda/registry.ts) is the census of
// what span's steps call on the native backend: recorded again here, it must be the same.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

describe('recordKernels', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu')
  })

  it('names the kernels of forward, gradient and update, and restores the engine', () => {
    const x = tf.variable(tf.ones([2, 3]))
    const seen = recordKernels(() => {
      const g = tf.grad((t: tf.Tensor) => t.exp().sum())(x)
      g.dispose()
    })
    expect([...seen]).toEqual(expect.arrayContaining(['Exp', 'Sum', 'Multiply']))
    expect(recordKernels(() => undefined).size).toBe(0)
    const before = tf.engine().runKernel
    recordKernels(() => tf.tidy(() => x.add(1)))
    expect(tf.engine().runKernel).toBe(before)
    x.dispose()
  })
})

describe('the cuda kernel registry', () => {
  it('splits the census into fused, standard and alias kernels', () => {
    expect(CUDA_KERNELS.length).toBe(new Set(CUDA_KERNELS).size)
    for (const k of CUDA_FUSED_KERNELS) expect(CUDA_KERNELS, k).toContain(k)
    for (const k of CUDA_ALIAS_KERNELS) expect(CUDA_STANDARD_KERNELS, k).toContain(k)
    expect(CUDA_STANDARD_KERNELS.length + CUDA_FUSED_KERNELS.length).toBe(CUDA_KERNELS.length)
  })

  it.skipIf(!status.available)(`equals the census of a pre-training and every fine-tuning step on native${reason}`, async () => {
    const census = await kernelCensus('native')
    expect(Object.keys(census)).toEqual(Object.keys(KERNEL_CENSUS))
    for (const [step, kernels] of Object.entries(census)) {
      const missing = kernels.filter((k) => !KERNEL_CENSUS[step].includes(k))
      const unused = KERNEL_CENSUS[step].filter((k) => !kernels.includes(k))
      expect({step, missing, unused}, 'update registry.ts from `npx tsx tools/kernel-census.ts`').toEqual({step, missing: [], unused: []})
    }
  })
})
