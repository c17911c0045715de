// The matrix products' float64 reference and a gemm_ld runner, shared by the native GEMM tests
// (test/core/engine/native-gemm*.test.ts): fp32 within 1e-5 of Σ|a·b| (summation-order error), bf16
// equal to the reference on operands rounded by cuda/bf16.ts' f32ToBf16 (the one definition).
import {bf16ToF32, f32ToBf16} from '../../src/core/engine/cuda/bf16.js'
import type {NativeAddon} from '../../src/core/engine/native-kernels.js'
import {nativeAddon} from '../../src/core/engine/native.js'

const addon = (): NativeAddon => nativeAddon() as NativeAddon

let seed = 7
/** Seeded values in [-2, 2). */
export function rand(n: number): Float32Array {
  const x = new Float32Array(n)
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    x[i] = (seed / 2147483648) * 4 - 2
  }
  return x
}

const round = (x: number) => bf16ToF32(f32ToBf16(x))

export interface Case {
  M: number
  N: number
  K: number
  ta: boolean
  tb: boolean
  beta: number
  pad: number // extra elements per row of each operand (leading dimension = width + pad)
}

/** C0 + op(A)·op(B) in float64 with its bound Σ|a·b| + |C0|, operands rounded to bf16 first when bf16. */
export function reference(c: Case, a: Float32Array, b: Float32Array, c0: Float32Array, bf16: boolean, lds: number[]) {
  const [lda, ldb, ldc] = lds
  const val = new Float64Array(c.M * c.N)
  const bound = new Float64Array(c.M * c.N)
  const r = bf16 ? round : (x: number) => x
  for (let i = 0; i < c.M; i++)
    for (let j = 0; j < c.N; j++) {
      let s = c.beta ? c0[i * ldc + j] : 0
      let m = Math.abs(s)
      for (let k = 0; k < c.K; k++) {
        const p = r(c.ta ? a[k * lda + i] : a[i * lda + k]) * r(c.tb ? b[j * ldb + k] : b[k * ldb + j])
        s += p
        m += Math.abs(p)
      }
      val[i * c.N + j] = s
      bound[i * c.N + j] = m
    }
  return {val, bound}
}

/** Runs gemmLd on one case; the largest error relative to the bound, and the padding left untouched. */
export function runLd(c: Case, bf16: boolean): {err: number; padKept: boolean; vsFp32: number} {
  const lda = (c.ta ? c.M : c.K) + c.pad
  const ldb = (c.tb ? c.K : c.N) + c.pad
  const ldc = c.N + c.pad
  const a = rand((c.ta ? c.K : c.M) * lda)
  const b = rand((c.tb ? c.N : c.K) * ldb)
  const c0 = rand(c.M * ldc)
  const out = c0.slice()
  addon().gemmLd!(a, b, out, c.ta, c.tb, c.M, c.N, c.K, lda, ldb, ldc, c.beta)
  const {val, bound} = reference(c, a, b, c0, bf16, [lda, ldb, ldc])
  const fp32 = bf16 ? reference(c, a, b, c0, false, [lda, ldb, ldc]).val : val
  let err = 0
  let vsFp32 = 0
  let padKept = true
  for (let i = 0; i < c.M; i++) {
    for (let j = 0; j < c.N; j++) {
      const k = i * c.N + j
      err = Math.max(err, Math.abs(out[i * ldc + j] - val[k]) / Math.max(bound[k], 1e-30))
      vsFp32 = Math.max(vsFp32, Math.abs(out[i * ldc + j] - fp32[k]) / Math.max(bound[k], 1e-30))
    }
    for (let j = c.N; j < ldc; j++) padKept &&= out[i * ldc + j] === c0[i * ldc + j]
  }
  return {err, padKept, vsFp32}
}

/** gemm_ld's odd shapes: every transpose, 1-wide, K = 0, beta 0 and 1, dense and padded leading dimensions. */
export function oddCases(): Case[] {
  const cases: Case[] = []
  for (const ta of [false, true])
    for (const tb of [false, true])
      for (const [M, N, K] of [
        [1, 1, 1],
        [1, 37, 5],
        [33, 1, 17],
        [17, 29, 0],
        [67, 45, 130],
        [5, 300, 64],
      ])
        cases.push({M, N, K, ta, tb, beta: (M + N + K) % 2, pad: 0}, {M, N, K, ta, tb, beta: 1 - ((M + N + K) % 2), pad: 3})
  return cases
}
