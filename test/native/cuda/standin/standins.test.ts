import {spawnSync} from 'node:child_process'
import {existsSync, rmSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins, scenario} from '../../../helpers/cuda-standins.js'

// The CUDA stand-ins and the CUDA-C emulator (native/cuda/standin, docs/cuda-standins.md),
// driven by harness.cc through the prototypes of native/cuda/src/abi.h: kernels of kernels/
// compiled by the NVRTC stand-in, loaded and launched by the libcuda stand-in, against CPU
// references; every schedule; and the failures the emulator must report.
const s = buildStandins()
const skip = 'error' in s ? ` (skipped: ${s.error})` : ''
const SCHEDULES = ['inorder', 'reverse', 'random:1', 'random:7', 'warp']

describe.skipIf(skip !== '')(`CUDA stand-ins and emulator${skip}`, () => {
  it('LayerNorm, 64 blocks × 256 threads and 512 × 128, equals the CPU reference within 5e-7', () => {
    for (const [rows, block] of [
      [64, 256],
      [512, 128],
    ]) {
      const r = scenario(s, 'layernorm', [rows, 768, block], {HARNESS_REPEAT: '1'})
      expect(r.maxRelErr as number, JSON.stringify(r)).toBeLessThanOrEqual(5e-7)
      expect(r.launches).toBe(2) // spanStandinLaunchCount: the warm-up and the timed launch
    }
  })

  it('correct kernels give the same bits under every schedule', () => {
    const ln = SCHEDULES.map((sch) => scenario(s, 'layernorm', [16, 300, 96], {SPAN_EMU_SCHEDULE: sch, HARNESS_REPEAT: '1'}))
    for (const r of ln) expect(r.maxRelErr as number).toBeLessThanOrEqual(5e-7)
    expect(new Set(ln.map((r) => r.digest)).size).toBe(1)
    const warp = SCHEDULES.map((sch) => scenario(s, 'warp', [], {SPAN_EMU_SCHEDULE: sch}))
    expect(new Set(warp.map((r) => r.digest)).size).toBe(1)
    const atomics = SCHEDULES.map((sch) => scenario(s, 'atomics', [5000, 7, 96], {SPAN_EMU_SCHEDULE: sch}))
    for (const a of atomics) expect(a).toEqual(atomics[0])
  })

  it('a planted missing barrier before shared memory is reused is caught by the warp-at-a-time schedule', () => {
    const planted = scenario(s, 'layernorm', [16, 300, 96, 1], {SPAN_EMU_SCHEDULE: 'warp', HARNESS_REPEAT: '1'})
    expect(planted.maxRelErr as number).toBeGreaterThan(1e-2)
    const fixed = scenario(s, 'layernorm', [16, 300, 96, 0], {SPAN_EMU_SCHEDULE: 'warp', HARNESS_REPEAT: '1'})
    expect(fixed.maxRelErr as number).toBeLessThanOrEqual(5e-7)
    // the other shape, where only warp 0 reads the partials: the last warp to reach the barrier runs on and overwrites them
    expect(scenario(s, 'reduce-twice', [1], {SPAN_EMU_SCHEDULE: 'warp'}).bad as number).toBeGreaterThan(0)
    for (const sch of SCHEDULES) expect(scenario(s, 'reduce-twice', [0], {SPAN_EMU_SCHEDULE: sch})).toEqual({bad: 0})
  })

  it('warp shuffles (idx, up, down, xor, widths), ballot/any/all and __syncthreads_count/_and/_or on a partial warp', () => {
    const out = scenario(s, 'warp').out as number[]
    const v = (t: number) => 7 * t + 1
    for (let t = 0; t < 48; t++) {
      const lane = t % 32
      const base = t - lane
      const lanes = base === 0 ? 32 : 16
      const o = out.slice(t * 10, t * 10 + 10)
      expect(o[0], `thread ${t} shfl idx`).toBe(v(base + ((lane & ~15) | 3)))
      expect(o[1], `thread ${t} shfl up`).toBe(lane % 8 >= 1 ? v(t - 1) : v(t))
      if (lane + 2 < lanes) expect(o[2], `thread ${t} shfl down`).toBe(v(t + 2))
      else if (lane + 2 > 31) expect(o[2]).toBe(v(t))
      expect(o[3], `thread ${t} shfl xor`).toBe(v(base + (lane ^ 1)))
      let ballot = 0
      for (let l = 0; l < lanes; l++) if ((base + l) % 3 === 0) ballot |= 1 << l
      expect(o[4], `thread ${t} ballot`).toBe(ballot)
      expect(o.slice(5), `thread ${t} any all count and or`).toEqual([base === 32 ? 1 : 0, base === 0 ? 1 : 0, 33, 1, 1])
    }
  })

  it('threads that exit before a barrier count as arrived; 2-D grids and blocks; shared memory a block did not write reads NaN', () => {
    // staleShared: 3 per thread when block 0 reads its own 1.0 and block 1, which wrote nothing, reads NaN (shared memory is poisoned per block)
    for (const sch of SCHEDULES) expect(scenario(s, 'shapes', [], {SPAN_EMU_SCHEDULE: sch})).toEqual({earlyBad: 0, gridBad: 0, staleShared: 3 * 64})
  })

  it('math functions (expf, erff, tanhf, rsqrtf, __expf, fmaxf) and bf16 through a shuffle and an atomic', () => {
    const r = scenario(s, 'math')
    expect(r.mathMaxRelErr as number).toBeLessThan(2e-6)
    expect(r.bf16).toEqual([0x3f81, 0x3f80, 0x3f82]) // lane 0 holds lane 1's value, rounded up; lane 1 lane 0's, rounded down
    expect(r.bf16Sum).toBe(0x4200) // 32 atomic adds of 1: 32.0
  })

  it('atomics across blocks: float sum, counts, min/max, 64-bit adds, a CAS loop', () => {
    const n = 10000
    const r = scenario(s, 'atomics', [n, 20, 128])
    expect(r).toMatchObject({count: n, umax: n - 1, imin: -(n - 1), total: (n * (n - 1)) / 2, fmax: 12.5})
    expect(r.fsum).toBe(r.expected) // every value a multiple of 1/8: exact in any order
  })

  it('dynamic shared memory: extern __shared__, the 48 KiB limit and cuFuncSetAttribute, the PTX form', () => {
    expect(scenario(s, 'dynsmem', [1000, 128, 0, 0])).toEqual({launch: 'CUDA_SUCCESS', bad: 0})
    expect(scenario(s, 'dynsmem', [1000, 128, 0, 1])).toEqual({launch: 'CUDA_SUCCESS', bad: 0})
    expect(scenario(s, 'dynsmem', [1000, 128, 1, 0])).toEqual({launch: 'CUDA_SUCCESS', bad: 0})
    const refused = scenario(s, 'dynsmem', [1000, 128, 2, 0])
    expect(refused.launch).toBe('CUDA_ERROR_INVALID_VALUE')
    expect(refused.message).toMatch(/65536 bytes of dynamic shared memory, above 49152/)
  })

  it('a deadlock is reported, not hung: a barrier against a shuffle, and a shuffle some lanes never join', () => {
    const a = scenario(s, 'fault', ['barrier_vs_shuffle', 64])
    expect(a.launch).toBe('CUDA_ERROR_LAUNCH_FAILED')
    expect(a.message).toBe(
      'cuLaunchKernel: deadlock in block (0,0,0) of kernel barrier_vs_shuffle under schedule inorder: threads 0-15 wait at __syncthreads; ' +
        'threads 16-31 wait at __shfl_xor_sync (mask 0xffffffff); threads 32-63 exited',
    )
    expect(a.after).toBe('CUDA_ERROR_LAUNCH_FAILED') // sticky, as a GPU fault is
    const b = scenario(s, 'fault', ['shuffle_never_joined', 32], {SPAN_EMU_SCHEDULE: 'warp'})
    expect(b.message).toMatch(/threads 0-15 wait at __shfl_down_sync \(mask 0xffffffff\); threads 16-31 wait at __syncthreads$/)
  })

  it('a failed assert ends the launch with CUDA_ERROR_ASSERT and the source line', () => {
    const r = scenario(s, 'fault', ['asserts', 64])
    expect(r).toMatchObject({launch: 'CUDA_ERROR_ASSERT', after: 'CUDA_ERROR_ASSERT'})
    expect(r.message).toBe('cuLaunchKernel: faults.cu:17: assertion failed: x[threadIdx.x] >= 0 in thread 63')
  })

  it('memory outside live allocations is refused: copies past the end, memsets, host and freed pointers, kernel arguments', () => {
    const r = scenario(s, 'copies') as Record<string, [string, string]>
    expect(r.inside).toEqual(['CUDA_SUCCESS', ''])
    expect(r.pastEnd[0]).toBe('CUDA_ERROR_INVALID_VALUE')
    expect(r.pastEnd[1]).toMatch(/^cuMemcpyHtoD: \[0x[0-9a-f]+, \+901\) runs past the end of the allocation at 0x[0-9a-f]+ of 1000 bytes$/)
    expect(r.memsetPastEnd[1]).toMatch(/^cuMemsetD32: .* runs past the end/)
    expect(r.hostPointer[1]).toMatch(/is not device memory/)
    expect(r.freed[1]).toMatch(/^cuMemcpyDtoH: 0x[0-9a-f]+ points into freed memory \(the allocation at 0x[0-9a-f]+ of 64 bytes\)$/)
    expect(r.doubleFree[0]).toBe('CUDA_ERROR_INVALID_VALUE')
    const k = scenario(s, 'fault', ['touch', 64])
    expect(k.launch).toBe('CUDA_ERROR_ILLEGAL_ADDRESS')
    expect(k.message).toMatch(/^cuLaunchKernel: kernel touch, parameter 0: 0x[0-9a-f]+ points into freed memory/)
  })

  it('a kernel touching memory past an allocation or freed memory fails with CUDA_ERROR_ILLEGAL_ADDRESS (guard pages)', () => {
    const over = scenario(s, 'guard', ['overrun'])
    expect(over).toMatchObject({launch: 'CUDA_ERROR_ILLEGAL_ADDRESS', after: 'CUDA_ERROR_ILLEGAL_ADDRESS'})
    expect(over.message).toMatch(
      /^cuLaunchKernel: illegal address: kernel overrun, block \(1,0,0\), thread 0: an access at 0x[0-9a-f]+, 96 bytes past the end of the allocation at 0x[0-9a-f]+ of 4000 bytes$/,
    )
    const freed = scenario(s, 'guard', ['indirect'])
    expect(freed.message).toMatch(
      /kernel indirect, block \(0,0,0\), thread 0: an access at 0x[0-9a-f]+ into freed memory \(the allocation at 0x[0-9a-f]+ of 4000 bytes\)$/,
    )
  })

  it('stream work runs at once, or with SPAN_STANDIN_DEFER=1 only at a synchronisation: a read before it sees stale data', () => {
    expect(scenario(s, 'deferred')).toEqual({before: 1, query1: 'CUDA_SUCCESS', query2: 'CUDA_SUCCESS', after: 1})
    expect(scenario(s, 'deferred', [], {SPAN_STANDIN_DEFER: '1'})).toEqual({before: -1, query1: 'CUDA_ERROR_NOT_READY', query2: 'CUDA_SUCCESS', after: 1})
    const ln = scenario(s, 'layernorm', [16, 300, 96], {SPAN_STANDIN_DEFER: '1', HARNESS_REPEAT: '1'})
    expect(ln.maxRelErr as number).toBeLessThanOrEqual(5e-7)
    const dead = scenario(s, 'fault', ['barrier_vs_shuffle', 64], {SPAN_STANDIN_DEFER: '1'})
    expect(dead).toMatchObject({launch: 'CUDA_SUCCESS', after: 'CUDA_ERROR_LAUNCH_FAILED'}) // a fault shows at the synchronisation, as on a GPU
  })

  it('NVRTC refusals: a compile error through the program log, an unknown option, INFINITY as under NVRTC', () => {
    const r = scenario(s, 'compile-errors') as Record<string, [string, string]>
    expect(r.syntax[0]).toBe('NVRTC_ERROR_COMPILATION')
    expect(r.syntax[1]).toMatch(/syntax\.cu:3:\d+: error: /)
    expect(r.option).toEqual(['NVRTC_ERROR_INVALID_OPTION', 'nvrtc: error: unrecognized option --no-such-option\n'])
    expect(r.infinity[0]).toBe('NVRTC_ERROR_COMPILATION')
    expect(r.infinity[1]).toMatch(/'INFINITY' was not declared|‘INFINITY’ was not declared/)
  })
})

describe.skipIf(skip !== '')(`bf16 conversions of the emulator${skip}`, () => {
  // bf16-check.cc, in C for speed: against CUDA's own cuda_bf16.h where its toolkit is installed,
  // else against an independent reference. SPAN_BF16_EXHAUSTIVE=1 checks all 2^32 float patterns.
  it('are bit-exact with CUDA: round to nearest even, canonical NaN, exact widening, double rounded once', () => {
    const r = scenarioBf16()
    expect(r.mismatches).toBe(0)
    expect(r.checked as number).toBeGreaterThan(process.env.SPAN_BF16_EXHAUSTIVE === '1' ? 4e9 : 1.7e7)
  })
})

function scenarioBf16(): Record<string, unknown> {
  if ('error' in s) throw new Error(s.error)
  const here = join(import.meta.dirname)
  const real = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include')
  const out = join(dirname(s.dir), 'standin-tests')
  const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
  const obj = join(out, `bf16-ours-${process.pid}.o`) // test runs in parallel each build their own
  const ours = spawnSync(cxx, ['-std=c++17', '-O2', '-c', `-I${join(s.dir, 'span-emu', 'include')}`, join(here, 'bf16-ours.cc'), '-o', obj])
  expect(ours.status, String(ours.stderr)).toBe(0)
  const withReal = existsSync(join(real, 'cuda_bf16.h')) ? ['-DREAL_BF16', `-I${real}`] : []
  const exe = join(out, `bf16-check-${process.pid}`)
  const c = spawnSync(cxx, ['-std=c++17', '-O2', ...withReal, join(here, 'bf16-check.cc'), obj, '-o', exe], {encoding: 'utf8'})
  expect(c.status, c.stderr).toBe(0)
  const r = spawnSync(exe, process.env.SPAN_BF16_EXHAUSTIVE === '1' ? ['all'] : [], {encoding: 'utf8'})
  rmSync(obj, {force: true})
  rmSync(exe, {force: true})
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>
}
