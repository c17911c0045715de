import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, renameSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins, ROOT} from '../../../helpers/cuda-standins.js'

// Issue 21's fused epilogues (native/cuda/kernels/residual_layernorm.cu, linear_gelu.cu, bias_grad.cu) on the
// stand-in device: epilogue-harness.cc (fused-harness.cc plus these scenarios) runs each on odd
// sizes against a double CPU reference of the formula its .cu file cites and against the simple
// kernels it replaces on the same inputs (the `simple*` entries); every schedule the same bits.
const s = buildStandins()
const DIR = join(ROOT, 'test', 'native', 'cuda', 'fused')
const SRC = join(DIR, 'epilogue-harness.cc')
const SCHEDULES = ['inorder', 'reverse', 'random:1', 'random:7', 'warp']
const TOL = 1e-5

function harness(): string | {error: string} {
  if ('error' in s) return s
  const exe = join(dirname(s.dir), 'standin-tests', 'epilogue-harness')
  const abi = join(ROOT, 'native', 'cuda', 'src', 'abi.h')
  if (existsSync(exe) && [SRC, join(DIR, 'fused-harness.cc'), join(DIR, '..', 'harness-api.h'), abi].every((f) => statSync(f).mtimeMs <= statSync(exe).mtimeMs))
    return exe
  mkdirSync(dirname(exe), {recursive: true})
  const tmp = `${exe}.${process.pid}`
  const c = spawnSync(process.env.SPAN_EMU_CXX || process.env.CXX || 'g++', ['-std=c++17', '-O2', `-I${dirname(abi)}`, `-I${DIR}`, SRC, '-o', tmp, '-ldl'], {
    encoding: 'utf8',
  })
  if (c.status !== 0) return {error: `epilogue-harness.cc failed to compile: ${c.stderr}`}
  renameSync(tmp, exe)
  return exe
}

const exe = harness()
const skip = typeof exe === 'string' ? '' : ` (skipped: ${exe.error})`
type Result = {errors: Record<string, number>; digest: string; ms: number; [k: string]: unknown}

function run(name: string, args: (string | number)[], schedule: string): Result {
  const dir = 'error' in s ? '' : s.dir
  const env = {...process.env, SPAN_STANDIN_QUIET: '1', SPAN_EMU_SCHEDULE: schedule}
  const r = spawnSync(exe as string, [dir, join(ROOT, 'native', 'cuda', 'kernels'), name, ...args.map(String)], {encoding: 'utf8', env})
  const line = r.stdout.trim().split('\n').pop() ?? ''
  try {
    return JSON.parse(line) as Result
  } catch {
    throw new Error(`epilogue-harness ${name}: exit ${r.status}, ${r.stdout} ${r.stderr}`)
  }
}

/** Every output within TOL under every schedule, and the same bits under all of them. */
function everySchedule(name: string, args: (string | number)[]): Result {
  const rs = SCHEDULES.map((sch) => run(name, args, sch))
  for (const r of rs)
    for (const [out, err] of Object.entries(r.errors)) expect(err, `${name} ${args.join(' ')} ${out}: ${JSON.stringify(r)}`).toBeLessThanOrEqual(TOL)
  expect(new Set(rs.map((r) => r.digest)).size, `${name} ${args.join(' ')}: digests differ between schedules`).toBe(1)
  return rs[0]
}

describe.skipIf(skip !== '')(`fused epilogue CUDA kernels on the stand-in device${skip}`, () => {
  it("bias + dropout + residual + LayerNorm and its backward: native's mask regenerated, odd sizes, rows past one chunk", () => {
    const r = everySchedule('residual-layernorm', [37, 300, 128, 0.9, 42]) // 300 columns over 128 threads, 37 rows = 2 chunks
    expect(r.maskDiffers).toBe(0)
    expect(r.dropped as number).toBeGreaterThan(0)
    expect(everySchedule('residual-layernorm', [70, 33, 64, 0.5, 7]).maskDiffers).toBe(0) // 3 chunks over a grid of 3
    expect(everySchedule('residual-layernorm', [5, 97, 32, 1, 0]).dropped).toBe(0) // no dropout (eval, rate 0)
    everySchedule('residual-layernorm', [3, 1, 64, 0.8, 3]) // H = 1
    const empty = everySchedule('residual-layernorm', [0, 40, 64, 0.9, 1]) // no rows: the parameter gradients are 0
    expect(Object.values(empty.errors).every((e) => e === 0)).toBe(true)
  })

  it('bias + GeLU in one pass and its backward with the bias gradient from chunk sums: the same bits as the simple kernels', () => {
    expect(everySchedule('linear-gelu', [37, 300, 2]).bitsDiffer).toBe(0) // 2 chunks, grid-stride over columns (3 blocks of 128)
    expect(everySchedule('linear-gelu', [100, 7, 1]).bitsDiffer).toBe(0) // 4 chunks over one grid row
    expect(everySchedule('linear-gelu', [0, 10, 1]).errors.db).toBe(0)
  })

  it('the bias gradient from chunk sums: the same bits as the thread-per-column kernel, odd sizes, no rows', () => {
    expect(everySchedule('bias-grad', [70, 300, 2]).bitsDiffer).toBe(0) // 3 chunks over 2 grid rows, 3 column blocks
    expect(everySchedule('bias-grad', [31, 5, 1]).bitsDiffer).toBe(0) // one short chunk
    expect(everySchedule('bias-grad', [0, 10, 1]).errors.db).toBe(0)
  })
})
