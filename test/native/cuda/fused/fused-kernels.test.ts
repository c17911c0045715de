import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, renameSync, statSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins, ROOT} from '../../../helpers/cuda-standins.js'

// The fused kernels of native/cuda/kernels/ (layernorm, cross_entropy, sum_squares, adamw,
// dropout, linear_backward, attention_softmax) on the stand-in device: fused-harness.cc
// compiles each with the NVRTC stand-in, launches it through the libcuda stand-in on odd sizes
// (rows not a multiple of the block, empty inputs) and compares every output with a double CPU
// reference of the formula the .cu file cites; every schedule must give the same bits.
const s = buildStandins()
const SRC = join(ROOT, 'test', 'native', 'cuda', 'fused', 'fused-harness.cc')
const SCHEDULES = ['inorder', 'reverse', 'random:1', 'random:7', 'warp']
const TOL = 1e-5

function harness(): string | {error: string} {
  if ('error' in s) return s
  const exe = join(dirname(s.dir), 'standin-tests', 'fused-harness')
  const abi = join(ROOT, 'native', 'cuda', 'src', 'abi.h')
  if (existsSync(exe) && [SRC, join(dirname(SRC), '..', 'harness-api.h'), abi].every((f) => statSync(f).mtimeMs <= statSync(exe).mtimeMs)) return exe
  mkdirSync(dirname(exe), {recursive: true})
  const tmp = `${exe}.${process.pid}`
  const c = spawnSync(process.env.SPAN_EMU_CXX || process.env.CXX || 'g++', ['-std=c++17', '-O2', `-I${dirname(abi)}`, SRC, '-o', tmp, '-ldl'], {
    encoding: 'utf8',
  })
  if (c.status !== 0) return {error: `fused-harness.cc failed to compile: ${c.stderr}`}
  renameSync(tmp, exe)
  return exe
}

const exe = harness()
const skip = typeof exe === 'string' ? '' : ` (skipped: ${exe.error})`
type Result = {errors: Record<string, number>; digest: string; ms: number; [k: string]: unknown}

function run(name: string, args: (string | number)[], schedule = 'inorder'): Result {
  const dir = 'error' in s ? '' : s.dir
  const env = {...process.env, SPAN_STANDIN_QUIET: '1', SPAN_EMU_SCHEDULE: schedule}
  const r = spawnSync(exe as string, [dir, join(ROOT, 'native', 'cuda', 'kernels'), name, ...args.map(String)], {encoding: 'utf8', env})
  const line = r.stdout.trim().split('\n').pop() ?? ''
  try {
    return JSON.parse(line) as Result
  } catch {
    throw new Error(`fused-harness ${name}: exit ${r.status}, ${r.stdout} ${r.stderr}`)
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

describe.skipIf(skip !== '')(`fused CUDA kernels on the stand-in device${skip}`, () => {
  it('LayerNorm forward (y, mean, rstd) and backward (dx, dg, db): odd rows and widths, H = 1, no rows', () => {
    everySchedule('layernorm', [37, 300, 128]) // 300 columns over 128 threads, 37 rows
    everySchedule('layernorm', [5, 1023, 96])
    everySchedule('layernorm', [3, 1, 64]) // H = 1: y = b, dx = 0
    const empty = everySchedule('layernorm', [0, 300, 128]) // no rows: dg = db = 0
    expect(empty.errors).toEqual({y: 0, mean: 0, rstd: 0, dx: 0, dg: 0, db: 0})
  })

  it('cross-entropy: lse, the summed loss and dlogits; a label outside [0, C) gives a NaN loss, label −1 a padding row (0, no gradient); N = 0 gives 0', () => {
    expect(everySchedule('cross-entropy', [37, 1001, 128]).lossIsNaN).toBe(false)
    expect(everySchedule('cross-entropy', [9, 50, 64, 4]).lossIsNaN).toBe(true) // row 4's label is C
    expect(everySchedule('cross-entropy', [9, 50, 64, -1, 2]).lossIsNaN).toBe(false) // row 2's label is −1: padding (pre-training's padded targets)
    expect(everySchedule('cross-entropy', [0, 10, 64]).errors.loss).toBe(0)
  })

  it('sum of squares over several tensors (one empty) and the clipping factor, clipped and not', () => {
    everySchedule('sum-squares', [1.0, 1001, 0, 70000, 3]) // ‖g‖ ≈ 13 > 1: factor < 1
    everySchedule('sum-squares', [1000, 257]) // factor 1
  })

  it('AdamW in place, with weight decay and a device clipping factor, and without decay', () => {
    everySchedule('adamw', [1001, 3, 0.01, 0.5])
    everySchedule('adamw', [4099, 1, 0, 1])
  })

  it("dropout draws native's mask bit for bit (SplitMix64 of seed and index), kept fraction near keep", () => {
    for (const [n, keep, seed] of [
      [10007, 0.9, 42],
      [999, 0.5, 7],
    ]) {
      const r = everySchedule('dropout', [n, keep, seed])
      expect(r.bitsDiffer).toBe(0)
      expect(Math.abs((r.keptFraction as number) - keep)).toBeLessThan(0.05)
    }
  })

  it('GeLU backward and the bias gradient: odd sizes and no rows', () => {
    everySchedule('linear-backward', [37, 300])
    expect(everySchedule('linear-backward', [0, 10]).errors.db).toBe(0)
  })

  it("attention's masked softmax (padded keys) and its backward: T not a multiple of the block", () => {
    everySchedule('attention', [3, 2, 37, 64])
    everySchedule('attention', [2, 3, 130, 128])
  })

  it('fused flash attention (forward, dq, dk/dv): padding, dropout, odd T and T not a multiple of the tile, A and d varied', () => {
    // B A T d N keep seed; the reference draws native's dropout mask, so a mask that differed
    // between the forward and the backward kernels (or from native's) fails ctx or the grads.
    everySchedule('flash-attention', [3, 2, 37, 16, 64, 0.9, 7]) // (d, N) as kernels-flash-attention.ts picks them: shared compiles
    everySchedule('flash-attention', [2, 3, 130, 64, 64, 0.9, 5]) // three key tiles, the last of 2
    everySchedule('flash-attention', [2, 4, 65, 32, 64, 1, 3]) // no dropout
    everySchedule('flash-attention', [1, 2, 33, 128, 32, 0.5, 9]) // d = 128 (the widest the kernel takes)
    const one = everySchedule('flash-attention', [1, 1, 1, 8, 32, 1, 1]) // T = 1: P = 1, dq = dk = 0
    expect(one.errors.dq).toBe(0)
  })
})
