import {describe, expect, it} from 'vitest'
import type {NativeAddon} from '../../../src/core/engine/native-kernels.js'
import {loadNative, nativeAddon} from '../../../src/core/engine/native.js'
import {type Case, oddCases, rand, reference, runLd} from '../../helpers/gemm-reference.js'

// span's own AVX-512 kernel (native/src/gemm_span.cc) on every product, the attention-sized ones too
// (SPAN_GEMM_SMALL_K=avx512: by default those of depth ≤ 64 go to oneDNN), and on shapes that cross
// its blocks: several k blocks (1024 k units: fp32 elements, bf16 pairs), several row blocks, a
// partial 12-row tile and 32-column panel, odd K (a bf16 pair half zero), A transposed (packed whole).
process.env.SPAN_GEMM_SMALL_K = 'avx512' // read once, at this process's first product
const status = loadNative()
const addon = (): NativeAddon => nativeAddon() as NativeAddon
const paths = status.available ? (addon().info().gemmPaths ?? []) : []
const reason = paths.includes('avx512') ? '' : ' (skipped: no avx512 path on this CPU or build)'

describe.skipIf(!paths.includes('avx512'))(`span's avx512 kernel${reason}`, () => {
  const blocked: Case[] = []
  for (const [ta, tb] of [
    [false, false],
    [false, true],
    [true, false],
    [true, true],
  ])
    for (const [M, N, K] of [
      [61, 40, 2051], // fp32: 3 k blocks; bf16: 1026 pairs, 2 blocks, the last pair half zero; row blocks of 48
      [253, 33, 300], // one k block, row blocks of 156 (the second 97 rows, a 1-row tile), a 1-column panel
      [150, 70, 1030], // ≤ 192 rows: split over B's panels, B packed as it goes; fp32 2 k blocks, a 6-column panel
    ])
      blocked.push({M, N, K, ta, tb, beta: M % 2, pad: 5}, {M, N, K, ta, tb, beta: 1 - (M % 2), pad: 0})

  for (const prec of ['fp32', 'bf16'] as const) {
    const bf16 = prec === 'bf16'
    it.skipIf(bf16 && addon().info().bf16 === 'none')(`${prec}: odd shapes and block-crossing shapes, every transpose and beta`, () => {
      expect(addon().setGemmPath!('avx512')).toBe(true)
      addon().setPrecision(prec)
      try {
        let apart = 0
        for (const c of [...oddCases(), ...blocked]) {
          const r = runLd(c, bf16)
          expect(r.padKept, JSON.stringify(c)).toBe(true)
          expect(r.err, JSON.stringify(c)).toBeLessThanOrEqual(1e-5)
          apart = Math.max(apart, r.vsFp32)
        }
        if (bf16) expect(apart).toBeGreaterThan(1e-4) // really rounded: far from the fp32 product
        expect(addon().info().gemmFallbacks).toBe(0)
      } finally {
        addon().setPrecision('fp32')
      }
    })
  }

  it('batch_matmul splits one large product over the pool (B packed once, shared) and many small ones per thread', () => {
    expect(addon().setGemmPath!('avx512')).toBe(true)
    for (const [batch, M, N, K] of [
      [1, 120, 40, 1030],
      [12, 40, 70, 65],
    ]) {
      const a = rand(batch * M * K)
      const b = rand(batch * N * K)
      const out = new Float32Array(batch * M * N)
      addon().matmulBeta!(a, b, out, batch, batch, M, N, K, false, true, 0)
      for (let i = 0; i < batch; i++) {
        const c: Case = {M, N, K, ta: false, tb: true, beta: 0, pad: 0}
        const {val, bound} = reference(c, a.subarray(i * M * K), b.subarray(i * N * K), out, false, [K, K, N])
        for (let k = 0; k < M * N; k++) expect(Math.abs(out[i * M * N + k] - val[k])).toBeLessThanOrEqual(1e-5 * bound[k])
      }
    }
  })
})
