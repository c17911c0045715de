import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, renameSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins, ROOT} from '../../../helpers/cuda-standins.js'

// native/cuda/kernels/adamw_multi.cu on the stand-in device (adamw-multi-harness.cc): the squared
// global norm with the clipping factor in one launch and every parameter's AdamW update in one
// launch, against a double CPU reference (1e-5 of each output's largest magnitude) and against
// adamw.cu's per-tensor kernel (the same bits), under every emulator schedule (the same bits).
const s = buildStandins()
const SRC = join(ROOT, 'test', 'native', 'cuda', 'fused', 'adamw-multi-harness.cc')
const DEPS = [
  SRC,
  join(ROOT, 'test', 'native', 'cuda', 'fused', 'fused-harness.cc'),
  join(ROOT, 'test', 'native', 'cuda', 'harness-api.h'),
  join(ROOT, 'native', 'cuda', 'src', 'abi.h'),
]
const SCHEDULES = ['inorder', 'reverse', 'random:1', 'random:7', 'warp']

function harness(): string | {error: string} {
  if ('error' in s) return s
  const exe = join(dirname(s.dir), 'standin-tests', 'adamw-multi-harness')
  if (existsSync(exe) && DEPS.every((f) => statSync(f).mtimeMs <= statSync(exe).mtimeMs)) return exe
  mkdirSync(dirname(exe), {recursive: true})
  const tmp = `${exe}.${process.pid}`
  const cxx = process.env.SPAN_EMU_CXX || process.env.CXX || 'g++'
  const c = spawnSync(cxx, ['-std=c++17', '-O2', `-I${join(ROOT, 'native', 'cuda', 'src')}`, SRC, '-o', tmp, '-ldl'], {encoding: 'utf8'})
  if (c.status !== 0) return {error: `adamw-multi-harness.cc failed to compile: ${c.stderr}`}
  renameSync(tmp, exe)
  return exe
}

const exe = harness()
const skip = typeof exe === 'string' ? '' : ` (skipped: ${exe.error})`
type Result = {errors: Record<string, number>; digest: string; tensorsDifferFromPerTensor: number; ticket: number}

function run(args: (string | number)[], schedule: string): Result {
  const env = {...process.env, SPAN_STANDIN_QUIET: '1', SPAN_EMU_SCHEDULE: schedule}
  const dir = 'error' in s ? '' : s.dir
  const r = spawnSync(exe as string, [dir, join(ROOT, 'native', 'cuda', 'kernels'), ...args.map(String)], {encoding: 'utf8', env})
  try {
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as Result
  } catch {
    throw new Error(`adamw-multi-harness: exit ${r.status}, ${r.stdout} ${r.stderr}`)
  }
}

/** STEP WD MAXNORM GRID BLOCK CHUNK SIZE...: within 1e-5, equal to the per-tensor kernel, the same bits under every schedule. */
function everySchedule(args: (string | number)[]): Result {
  const rs = SCHEDULES.map((sch) => run(args, sch))
  for (const r of rs) {
    for (const [out, err] of Object.entries(r.errors)) expect(err, `${args.join(' ')} ${out}: ${JSON.stringify(r)}`).toBeLessThanOrEqual(1e-5)
    expect(r.tensorsDifferFromPerTensor, 'tensors whose p, m or v differ from adamw.cu').toBe(0)
    expect(r.ticket, 'the ticket is reset for the next launch').toBe(0)
  }
  expect(new Set(rs.map((r) => r.digest)).size, `${args.join(' ')}: digests differ between schedules`).toBe(1)
  return rs[0]
}

describe.skipIf(skip !== '')(`multi-tensor AdamW and global norm on the stand-in device${skip}`, () => {
  it('clipped (factor < 1), odd sizes, an empty tensor, chunks spanning blocks', () => {
    everySchedule([3, 0.01, 1.0, 7, 96, 256, 1001, 0, 5, 70000, 3, 768])
  })

  it('not clipped (maxNorm ∞ as with --clip 0), one block, a chunk larger than every tensor', () => {
    everySchedule([1, 0.01, 'inf', 1, 64, 100000, 1, 33, 4099])
  })

  it('more blocks than chunks', () => {
    everySchedule([10, 0, 0.5, 64, 32, 16, 17, 2])
  })
})
