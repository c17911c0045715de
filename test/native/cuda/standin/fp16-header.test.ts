import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, rmSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// The emulator's fp16 (native/cuda/standin/emu/include/cuda_fp16.h, issue 35) against CUDA's own
// cuda_fp16.h: fp16-check.cc (in C for speed) compares __float2half_rn/_rz/_rd/_ru, __float2half,
// __double2half and __half2float with the real header's inline host functions (the software path
// the GPU's cvt.*.f16.f32 and cvt.f32.f16 agree with) where a CUDA toolkit is installed, else with an
// independent reference (the nearest or directed neighbour computed in double). Every half pattern
// always; float patterns: the edges, every float whose low 13 bits sit around a rounding point,
// and a 1/251 stride; SPAN_FP16_EXHAUSTIVE=1 takes all 2^32.
const s = buildStandins()
const skip = 'error' in s ? ` (skipped: ${s.error})` : ''
const real = join(process.env.CUDA_HOME ?? '/usr/local/cuda', 'include')

function check(withHeader: boolean): Record<string, unknown> {
  if ('error' in s) throw new Error(s.error)
  const here = import.meta.dirname
  const out = join(dirname(s.dir), 'standin-tests')
  mkdirSync(out, {recursive: true})
  const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
  const obj = join(out, `fp16-ours-${process.pid}.o`)
  const ours = spawnSync(cxx, ['-std=c++17', '-O2', '-c', `-I${join(s.dir, 'span-emu', 'include')}`, join(here, 'fp16-ours.cc'), '-o', obj])
  expect(ours.status, String(ours.stderr)).toBe(0)
  const exe = join(out, `fp16-check-${process.pid}-${withHeader ? 'real' : 'ind'}`)
  const flags = withHeader ? ['-DREAL_FP16', `-I${real}`] : []
  const c = spawnSync(cxx, ['-std=c++17', '-O2', ...flags, join(here, 'fp16-check.cc'), obj, '-o', exe], {encoding: 'utf8'})
  expect(c.status, c.stderr).toBe(0)
  const r = spawnSync(exe, process.env.SPAN_FP16_EXHAUSTIVE === '1' ? ['all'] : [], {encoding: 'utf8'})
  rmSync(obj, {force: true})
  rmSync(exe, {force: true})
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>
}

describe.skipIf(skip !== '')(`fp16 conversions of the emulator${skip}`, () => {
  it.skipIf(!existsSync(join(real, 'cuda_fp16.h')))(
    "are bit-exact with CUDA's cuda_fp16.h: four roundings, canonical NaN, exact widening, double rounded once",
    () => {
      const r = check(true)
      expect(r).toMatchObject({reference: 'cuda_fp16.h', mismatches: 0})
      expect(r.checked as number).toBeGreaterThan(process.env.SPAN_FP16_EXHAUSTIVE === '1' ? 4.29e9 : 2.3e7)
    },
  )

  it('agree with an independent reference (the nearest or directed neighbour, in double)', () => {
    const r = check(false)
    expect(r).toMatchObject({reference: 'the independent reference', mismatches: 0})
  }, 120_000)
})
