import type * as tf from '@tensorflow/tfjs'
import {describe, expect, it} from 'vitest'
import type {CudaDevice} from '../../../../src/core/engine/cuda/kernel-table.js'
import {flashBackward, flashForward, type FlashDims, tensorCoreAttentionFailure} from '../../../../src/core/engine/cuda/kernels-flash-attention.js'

// Which attention kernels kernels-flash-attention.ts launches (a recording fake device, no CUDA):
// the tensor-core ones at bf16 with d a multiple of 16 and at tf32 with d a multiple of 16 up to 64,
// the FMA ones at fp32 and for other widths; and when NVRTC cannot compile flash_attention_wmma.cu (no CUDA headers on a GPU machine),
// the FMA ones instead, for the rest of the process, with the reason kept.
function fake(precision: CudaDevice['precision'], failWmma = false): {dev: CudaDevice; launched: string[]} {
  const launched: string[] = []
  const info = (shape: number[]) => ({dataId: {}, shape, dtype: 'float32'}) as unknown as tf.TensorInfo
  const dev = {
    precision,
    makeOutput: info,
    launch: (file: string, fn: string, _g: unknown, _b: unknown, _a: unknown, _s: unknown, defines?: Record<string, number>) => {
      if (failWmma && file === 'flash_attention_wmma')
        throw new Error(`nvrtcCompileProgram: NVRTC_ERROR_COMPILATION of ${file}.cu: cannot open source file "mma.h"\nmore`)
      launched.push(defines?.SPAN_FA_TF32 ? `${fn} tf32` : fn)
    },
  } as unknown as CudaDevice
  return {dev, launched}
}

const dims = (d: number): FlashDims => ({B: 2, T: 45, H: 2 * d, A: 2, d, scale: 1 / Math.sqrt(d), keep: 0.9, seed: 5})
const x = {dataId: {}, shape: [2, 45, 32], dtype: 'float32'} as unknown as tf.TensorInfo
const both = (dev: CudaDevice, D: FlashDims) => {
  flashForward(dev, D, x, x, x, x)
  flashBackward(dev, D, {dy: x, q: x, k: x, v: x, ctx: x, mask: x, lse: x})
}

describe('the choice of attention kernels', () => {
  it('bf16 with d a multiple of 16, tf32 with d 16 … 64: tensor cores; fp32, d = 8, tf32 with d = 128: FMA', () => {
    for (const [p, d] of [
      ['bf16', 16],
      ['bf16', 128],
      ['tf32', 64],
    ] as const) {
      const f = fake(p)
      both(f.dev, dims(d))
      const tf32 = p === 'tf32' ? ' tf32' : '' // the module compiled with -DSPAN_FA_TF32=1
      expect(f.launched, `${p} d ${d}`).toEqual([
        `span_flash_attention_forward_wmma${tf32}`,
        `span_flash_attention_backward_dq_wmma${tf32}`,
        `span_flash_attention_backward_dkdv_wmma${tf32}`,
      ])
    }
    for (const [p, d] of [
      ['fp32', 16],
      ['tf32', 128],
      ['bf16', 8],
    ] as const) {
      const f = fake(p)
      both(f.dev, dims(d))
      expect(f.launched, `${p} d ${d}`).toEqual([
        'span_flash_attention_forward_f32',
        'span_flash_attention_backward_dq_f32',
        'span_flash_attention_backward_dkdv_f32',
      ])
    }
    expect(tensorCoreAttentionFailure()).toBeNull()
  })

  it('a compile failure of the tensor-core file falls back to the FMA kernels, and stays so', () => {
    const f = fake('bf16', true)
    both(f.dev, dims(64))
    expect(f.launched).toEqual(['span_flash_attention_forward_f32', 'span_flash_attention_backward_dq_f32', 'span_flash_attention_backward_dkdv_f32'])
    expect(tensorCoreAttentionFailure()).toBe('nvrtcCompileProgram: NVRTC_ERROR_COMPILATION of flash_attention_wmma.cu: cannot open source file "mma.h"')
    const g = fake('bf16')
    both(g.dev, dims(64))
    expect(g.launched[0]).toBe('span_flash_attention_forward_f32')
  })
})
