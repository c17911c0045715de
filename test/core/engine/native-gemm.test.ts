import {readdirSync, readFileSync} from 'node:fs'
import {afterAll, describe, expect, it} from 'vitest'
import type {GemmPath, NativeAddon} from '../../../src/core/engine/native-kernels.js'
import {f32ToBf16} from '../../../src/core/engine/cuda/bf16.js'
import {loadNative, nativeAddon} from '../../../src/core/engine/native.js'
import {oddCases, rand, reference, runLd} from '../../helpers/gemm-reference.js'

// The native matrix products on every path this build has (oneDNN, the BLAS, the builtin kernel)
// and in both precisions, against a float64 reference: fp32 within 1e-5 of Σ|a·b| (summation-order
// error), bf16 equal to the reference on operands rounded by cuda/bf16.ts' f32ToBf16 (the one
// definition) within the same bound. Plus the vectorised bf16 conversion bit for bit, and that
// oneDNN adds no threads of its own to the addon's pool.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`
const addon = (): NativeAddon => nativeAddon() as NativeAddon

const PRECISIONS = ['fp32', 'bf16'] as const

describe.skipIf(!status.available)(`native matrix products on every path${reason}`, () => {
  const info = status.available ? addon().info() : {gemmPaths: [] as GemmPath[], gemmPath: 'builtin' as GemmPath}
  const paths = info.gemmPaths ?? []
  afterAll(() => {
    addon().setPrecision('fp32')
    addon().setGemmPath!(info.gemmPath!)
  })

  it('info() names the path, its ISA and the bf16 capability; the default is the first path this build has', () => {
    const i = addon().info()
    expect(paths.length).toBeGreaterThan(0)
    expect(paths.at(-1)).toBe('builtin')
    expect(i.gemmPath).toBe(paths[0])
    if (paths[0] === 'avx512') {
      expect(i.gemm).toBe(i.bf16 === 'none' ? 'span avx512 (avx512f)' : 'span avx512 (avx512f, avx512_bf16)')
      expect(i.gemmIsa).toBe(i.bf16 === 'none' ? 'avx512f' : 'avx512_bf16')
    } else if (paths[0] === 'onednn') {
      expect(i.gemm).toMatch(/^onednn \d+\.\d+\.\d+ \((avx|sse)[a-z0-9_]*\)$/)
      expect(i.gemmImpl!.fp32).not.toBe('')
    } else expect(i.gemm).toBe(paths[0] === 'blas' ? i.blas : 'builtin')
    expect(['amx', 'avx512_bf16', 'none']).toContain(i.bf16)
    if (process.platform === 'linux' && process.arch === 'x64') {
      const flags = new Set(
        readFileSync('/proc/cpuinfo', 'utf8')
          .match(/^flags\s*:(.*)$/m)![1]
          .trim()
          .split(/\s+/),
      )
      const expected = flags.has('amx_bf16') && flags.has('amx_tile') ? 'amx' : flags.has('avx512_bf16') ? 'avx512_bf16' : 'none'
      expect(i.bf16).toBe(expected)
    }
    expect(addon().setGemmPath!('builtin')).toBe(true)
    expect(addon().info().gemm).toBe('builtin')
    expect(() => addon().setGemmPath!('mkl' as GemmPath)).toThrow(/onednn, blas or builtin/)
    addon().setGemmPath!(paths[0])
  })

  const cases = oddCases()

  for (const path of paths)
    for (const prec of PRECISIONS)
      it(`gemm_ld on ${path}, ${prec}: odd shapes, transposes, beta 0 and 1, leading dimensions, K = 0, M or N = 1`, () => {
        expect(addon().setGemmPath!(path)).toBe(true)
        addon().setPrecision(prec)
        let worst = 0
        let apart = 0
        for (const c of cases) {
          const r = runLd(c, prec === 'bf16')
          expect(r.padKept, JSON.stringify(c)).toBe(true)
          expect(r.err, JSON.stringify(c)).toBeLessThanOrEqual(1e-5)
          worst = Math.max(worst, r.err)
          apart = Math.max(apart, r.vsFp32)
        }
        if (path === 'onednn') expect(addon().info().gemmFallbacks).toBe(0) // oneDNN ran them all
        // bf16 really rounds (2⁻⁹ relative per operand): far from the fp32 product
        if (prec === 'bf16') expect(apart).toBeGreaterThan(1e-4)
        else expect(worst).toBeLessThan(1e-5)
      })

  /** batch_matmul: [batchA, M, K]·[batchB, K, N] with broadcasting, on dense operands. */
  function runBatch(bA: number, bB: number, M: number, N: number, K: number, ta: boolean, tb: boolean, beta: number, bf16: boolean) {
    const batch = Math.max(bA, bB)
    const a = rand(bA * M * K)
    const b = rand(bB * K * N)
    const c0 = rand(batch * M * N)
    const out = c0.slice()
    addon().matmulBeta!(a, b, out, bA, bB, M, N, K, ta, tb, beta)
    let err = 0
    for (let i = 0; i < batch; i++) {
      const ai = a.subarray((bA === 1 ? 0 : i) * M * K, ((bA === 1 ? 0 : i) + 1) * M * K)
      const bi = b.subarray((bB === 1 ? 0 : i) * K * N, ((bB === 1 ? 0 : i) + 1) * K * N)
      const ci = c0.subarray(i * M * N, (i + 1) * M * N)
      const {val, bound} = reference({M, N, K, ta, tb, beta, pad: 0}, ai, bi, ci, bf16, [ta ? M : K, tb ? K : N, N])
      for (let k = 0; k < M * N; k++) err = Math.max(err, Math.abs(out[i * M * N + k] - val[k]) / Math.max(bound[k], 1e-30))
    }
    return err
  }

  for (const path of paths)
    for (const prec of PRECISIONS)
      it(`batch_matmul on ${path}, ${prec}: broadcast batches, many small entries, row and column stripes, beta 1`, () => {
        expect(addon().setGemmPath!(path)).toBe(true)
        addon().setPrecision(prec)
        const bf16 = prec === 'bf16'
        const shapes: [number, number, number, number, number][] = [
          [9, 9, 13, 11, 7], // whole entries per thread
          [1, 6, 16, 24, 8], // A broadcast
          [5, 1, 21, 3, 19], // B broadcast
          [1, 1, 300, 20, 70], // one large product: row stripes
          [1, 1, 8, 600, 40], // column stripes
          [2, 2, 0 + 3, 5, 0], // K = 0
        ]
        for (const [bA, bB, M, N, K] of shapes)
          for (const [ta, tb] of [
            [false, false],
            [true, true],
            [false, true],
          ])
            for (const beta of [0, 1]) expect(runBatch(bA, bB, M, N, K, ta, tb, beta, bf16), `${[bA, bB, M, N, K, ta, tb, beta]}`).toBeLessThanOrEqual(1e-5)
        if (path === 'onednn') expect(addon().info().gemmFallbacks).toBe(0)
      })

  it('bad arguments to the test entry points are refused, nothing written', () => {
    const a = new Float32Array(4)
    expect(() => addon().gemmLd!(a, a, a, false, false, 3, 3, 3, 3, 3, 3, 0)).toThrow(/gemmLd/)
    expect(() => addon().matmulBeta!(a, a, a, 2, 3, 1, 1, 1, false, false, 0)).toThrow(/matmulBeta/)
    expect(() => addon().matmulBeta!(a, a, a, 1, 1, 1, 1, 1, false, false, 2)).toThrow(/matmulBeta/)
  })

  it.skipIf(process.platform !== 'linux')('oneDNN starts no threads of its own: the pool is the only one', () => {
    const tasks = () => readdirSync('/proc/self/task').length
    addon().setThreads(2)
    addon().setGemmPath!('builtin')
    const a = rand(256 * 256)
    const out = new Float32Array(256 * 256)
    addon().matmul(a, a, out, 1, 1, 256, 256, 256, false, false) // the pool's workers started
    const before = tasks()
    for (const path of paths)
      for (const prec of PRECISIONS) {
        addon().setGemmPath!(path)
        addon().setPrecision(prec)
        addon().matmul(a, a, out, 1, 1, 256, 256, 256, false, false)
        addon().matmul(a, a, out, 16, 16, 64, 64, 64, false, true)
      }
    expect(tasks()).toBe(before)
  })
})

describe.skipIf(!status.available)(`bf16 conversion of the operands${reason}`, () => {
  const u32 = new Uint32Array(1)
  const f32 = new Float32Array(u32.buffer)

  /** The vectorised and scalar conversions of xs, against cuda/bf16.ts' f32ToBf16. */
  function check(xs: Float32Array): void {
    const vec = new Uint16Array(xs.length)
    const sca = new Uint16Array(xs.length)
    addon().toBf16!(xs, vec, false)
    addon().toBf16!(xs, sca, true)
    for (let i = 0; i < xs.length; i++) {
      const want = f32ToBf16(xs[i])
      if (vec[i] !== want || sca[i] !== want) {
        f32[0] = xs[i]
        expect({bits: u32[0].toString(16), vec: vec[i].toString(16), scalar: sca[i].toString(16)}).toEqual({
          bits: u32[0].toString(16),
          vec: want.toString(16),
          scalar: want.toString(16),
        })
      }
    }
  }

  const EDGES = [
    0x00000000,
    0x80000000, // ±0
    0x3f808000,
    0x3f818000,
    0xbf808000,
    0x3f807fff,
    0x3f808001, // ties to even (down, up), negative tie, either side
    0x7f800000,
    0xff800000, // ±inf
    0x7fc00000,
    0xffc00000,
    0x7fc00001,
    0x7f800001,
    0xff812345,
    0x7fffffff, // NaNs: quiet, negative, payloads, signalling
    0x00000001,
    0x80000001,
    0x00008000,
    0x00018000,
    0x00007fff,
    0x007fffff,
    0x807fffff,
    0x00400000, // subnormals, their ties, the largest
    0x00800000,
    0x7f7fffff,
    0xff7fffff,
    0x7f7f7fff,
    0x7f7f8000, // smallest normal; the largest fp32 (to inf) and the ties below it
  ]

  it('edge values bit for bit, at every position of a vector block and in the tail', () => {
    for (const e of EDGES)
      for (const len of [1, 15, 16, 17, 31, 32, 33, 64, 70])
        for (let pos = 0; pos < len; pos += Math.max(1, len >> 3)) {
          const xs = rand(len)
          new Uint32Array(xs.buffer)[pos] = e // through the bits: a NaN's payload kept
          check(xs)
        }
    check(new Float32Array(Uint32Array.from(EDGES).buffer))
  })

  it('a sweep of 2²¹ bit patterns (every 4096th of the 2³² and as many random ones) bit for bit', () => {
    const n = 1 << 20
    const xs = new Float32Array(2 * n)
    const bits = new Uint32Array(xs.buffer)
    for (let i = 0; i < n; i++) bits[i] = (i * 4096 + (i & 4095)) >>> 0
    let s = 12345
    for (let i = n; i < 2 * n; i++) {
      s = (Math.imul(s, 1664525) + 1013904223) >>> 0
      bits[i] = s
    }
    check(xs)
  })
})
