import {describe, expect, it} from 'vitest'
import {buildStandins, scenario} from '../../../helpers/cuda-standins.js'

// nvcuda::wmma on the CUDA-C emulator (native/cuda/standin/emu/include/mma.h, docs/cuda-standins.md
// "Tensor cores"): m16n16k16 bf16 and m16n16k8 tf32 products with fp32 accumulation against a host reference (bit for
// bit against the emulator's stated order, within fp32 rounding of the exact sum), B and the stored
// D in both layouts, under every schedule; and the warp-collective misuse it must report.
const s = buildStandins()
const skip = 'error' in s ? ` (skipped: ${s.error})` : ''
const SCHEDULES = ['inorder', 'reverse', 'random:1', 'random:7', 'warp']

describe.skipIf(skip !== '')(`wmma on the emulator${skip}`, () => {
  it('d = 2·(a·b + c), K = 32 in two mma_sync: the stated rounding bit for bit, the exact sum within fp32, every layout and schedule', () => {
    const digests = new Set<string>()
    for (const [bcol, dcol] of [
      [0, 0],
      [1, 0],
      [0, 1],
      [1, 1],
    ])
      for (const sch of SCHEDULES) {
        const r = scenario(s, 'wmma', [bcol, dcol], {SPAN_EMU_SCHEDULE: sch})
        expect(r, `${bcol} ${dcol} ${sch}`).toMatchObject({launch: 'CUDA_SUCCESS', bad: 0})
        expect(r.relErr as number).toBeLessThan(1e-5)
        if (!dcol) digests.add(r.digest as string)
      }
    expect(digests.size, 'B row- or column-major, any schedule: the same bits').toBe(1)
  })

  it('tf32 (m16n16k8, __float_to_tf32 to nearest with ties away): the stated rounding bit for bit, the exact sum within the rounding of the inputs, every schedule', () => {
    for (const sch of SCHEDULES) {
      const r = scenario(s, 'wmma-tf32', [], {SPAN_EMU_SCHEDULE: sch})
      expect(r, sch).toMatchObject({launch: 'CUDA_SUCCESS', bad: 0, tie: 1 + 2 ** -10})
      expect(r.relErr as number).toBeLessThan(1e-2) // 16 products of inputs rounded by up to 2^-11 each
      expect(r.relErr as number).toBeGreaterThan(1e-6) // the inputs were rounded
    }
  })

  it('the fragment layout is opaque: every element in exactly one lane, not in row-major order', () => {
    expect(scenario(s, 'wmma-layout')).toEqual({once: 256, inOrder: false})
  })

  it('a whole warp converged runs; half a warp, a partial warp, lanes with different pointers, a misaligned pointer fail with a message', () => {
    expect(scenario(s, 'wmma-fault', ['wmma_whole_warp', 32])).toMatchObject({launch: 'CUDA_SUCCESS'})
    const half = scenario(s, 'wmma-fault', ['wmma_half_warp', 32])
    expect(half.launch).toBe('CUDA_ERROR_LAUNCH_FAILED')
    expect(half.message).toMatch(/warp 0: wmma::load_matrix_sync needs all 32 lanes of the warp converged; only lanes 0x0000ffff called it/)
    const partial = scenario(s, 'wmma-fault', ['wmma_partial_warp', 48])
    expect(partial.message).toMatch(/warp 1: wmma::load_matrix_sync needs all 32 lanes .* only lanes 0x0000ffff/)
    const differ = scenario(s, 'wmma-fault', ['wmma_lanes_differ', 32])
    expect(differ.message).toMatch(/warp 0: wmma::store_matrix_sync: lanes 0 and 8 pass different pointers/)
    const misaligned = scenario(s, 'wmma-fault', ['wmma_misaligned', 32])
    expect(misaligned.message).toMatch(/wmma::store_matrix_sync: ldm 16 must be a multiple of 16 bytes and the pointer 32-byte aligned/)
  })
})
