// The memory plan on the cuda backend (run-plan.ts): each rank has a device of its own, so the free
// device memory is not divided by the processes (the host's is); the line names the precision the
// run computes at, and under bf16 counts the GEMMs' bf16 operand copies. probeCuda is mocked: the
// free memory is the test's.
import {describe, expect, it, vi} from 'vitest'
import {presetConfig} from '../../../src/core/model/config.js'
import {resolveConfig} from '../../../src/core/train/config.js'
import {HEADROOM, planMemory} from '../../../src/core/train/memory-plan.js'
import {bf16ScratchBytes, budgetSharers, planRun} from '../../../src/core/train/run-plan.js'

const free = vi.hoisted(() => ({bytes: 0}))
vi.mock('../../../src/core/engine/cuda/addon.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  probeCuda: () => ({freeMem: free.bytes}),
}))

const shape = {model: presetConfig('tiny', 30522), seqLen: 128, ratio: 0.15, examples: 1000}
const cuda = {name: 'cuda', tfName: 'cuda'} as const
const room = (batch: number, nccl = false) => Math.ceil(planMemory({...shape, batch, allReduceOnDevice: nccl}).total / HEADROOM) + 1

describe('the memory plan on cuda', () => {
  it('gives each of 2 ranks the whole device: auto picks the micro-batch one process would', () => {
    free.bytes = room(8, true) // with NCCL's gradient buckets, which one process does not have
    const one = resolveConfig([{name: 'flags', values: {precision: 'fp32'}}])
    planRun(one, shape, cuda, 1)
    const two = resolveConfig([{name: 'flags', values: {precision: 'fp32'}}])
    const log = planRun(two, shape, cuda, 2).notes
    expect([one['batch-size'], two['batch-size']]).toEqual([8, 8])
    expect([one.accumulate, two.accumulate]).toEqual([4, 2]) // world still splits the rows: 2 × 8 × 2 = 32
    expect(log[1]).toMatch(/^memory plan \(fp32, backend cuda\): .* of \S+ [MG]iB free device memory \(a run/) // not "shared by 2 processes"
    expect(budgetSharers({name: 'native', tfName: 'cpu'}, 2)).toBe(2)
  })

  it('names bf16 and counts its operand copies in the peak', () => {
    free.bytes = 64 * room(8)
    const c = resolveConfig([{name: 'flags', values: {precision: 'bf16', 'batch-size': 8}}])
    const line = planRun(c, shape, cuda, 1).notes[0]
    const copies = bf16ScratchBytes({...shape, batch: 8}, 'bf16')
    const m = shape.model
    expect(copies).toBe(
      2 * Math.max(m.vocab_size * m.hidden_size + 8 * 19 * m.hidden_size, 8 * 128 * m.intermediate_size + m.intermediate_size * m.hidden_size),
    )
    expect(bf16ScratchBytes({...shape, batch: 8}, 'tf32')).toBe(0)
    expect(line).toMatch(/^memory plan \(bf16, backend cuda\): .*; bf16 operand copies \S+ MiB; about /)
  })

  it("counts NCCL's gradient buckets on each device where several ranks train on cuda, and only there", () => {
    const plan = (world: number, backend: {name: 'cuda' | 'native'; tfName: string}) => {
      const c = resolveConfig([{name: 'flags', values: {precision: 'fp32', 'batch-size': 8}}])
      return planRun(c, shape, backend, world)
    }
    free.bytes = 64 * room(8, true)
    const two = plan(2, cuda)
    const one = plan(1, cuda)
    expect(two.plan.collective).toBe(2 * 4 * two.plan.parameters)
    expect(two.plan.total - one.plan.total).toBe(two.plan.collective)
    expect(one.plan.collective).toBe(0)
    expect(plan(2, {name: 'native', tfName: 'native'}).plan.collective).toBe(0) // MPI on the host: no device buffers
    expect(two.notes[0]).toMatch(/; NCCL gradient buckets \S+ MiB; about /)
    expect(one.notes[0]).not.toMatch(/NCCL/)
    // the buckets decide what fits: room for batch 8 without them is not room for it with them
    free.bytes = room(8)
    const auto = resolveConfig([{name: 'flags', values: {precision: 'fp32'}}])
    planRun(auto, shape, cuda, 2)
    expect(auto['batch-size']).toBeLessThan(8)
  })
})
