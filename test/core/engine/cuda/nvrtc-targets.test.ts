import {describe, expect, it} from 'vitest'
import {defaultPrecision, defaultPrecisionWhy} from '../../../../src/core/engine/cuda/bf16.js'
import {nvrtcCannotTarget, oldestArch} from '../../../../src/core/engine/cuda/nvrtc-targets.js'

// Issue 35: what doctor says when the NVRTC found cannot compile for the GPU (CUDA 13 dropped
// sm_70: a V100 next to NVRTC 13), and the default precision by compute capability.
describe('NVRTC targets and the default precision', () => {
  it('NVRTC 13 compiles for Turing (7.5) and later only; 12 from 5.0; 11 from 3.5', () => {
    expect([13000, 13010, 12080, 12000, 11080, 11020].map(oldestArch)).toEqual([75, 75, 50, 50, 35, 35])
    expect(nvrtcCannotTarget(13000, 75)).toBeNull()
    expect(nvrtcCannotTarget(12080, 70)).toBeNull()
    expect(nvrtcCannotTarget(11080, 70)).toBeNull()
  })

  it('a V100 with NVRTC 13: one line naming the version, the GPU and what to install', () => {
    const why = nvrtcCannotTarget(13000, 70)!
    expect(why).toBe(
      'NVRTC 13.0 cannot compile for compute capability 7.0 (sm_70; it targets sm_75 and later): install NVRTC 12 (pip install nvidia-cuda-nvrtc-cu12) and put its lib folder first in SPAN_CUDA_LIBS; the driver may stay at 13',
    )
    expect(why).not.toContain('\n')
    expect(nvrtcCannotTarget(13000, 61)).toMatch(/^NVRTC 13\.0 cannot compile for compute capability 6\.1 \(sm_61;/)
  })

  it('defaults: bf16 from compute capability 8.0, fp16 on 7.x, fp32 before; doctor says why', () => {
    expect([60, 61, 70, 72, 75, 80, 86, 90].map(defaultPrecision)).toEqual(['fp32', 'fp32', 'fp16', 'fp16', 'fp16', 'bf16', 'bf16', 'bf16'])
    expect(defaultPrecisionWhy(75)).toBe('fp16 with dynamic loss scaling (compute capability 7.5: fp16 tensor cores, no bf16)')
    expect(defaultPrecisionWhy(61)).toBe('fp32 (compute capability 6.1: no tensor cores)')
  })
})
