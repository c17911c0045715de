import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../../src/core/data/rng.js'
import {type LtGemm, attentionGemms, batchMatMulGemm, ltGemm} from '../../../../src/core/engine/cuda/gemm-layout.js'

// The cuBLASLt layouts of the cuda backend's products (src/core/engine/cuda/gemm-layout.ts),
// executed by a reference of cuBLASLt's column-major semantics on host arrays and compared
// with tfjs' row-major products: plain batched GEMMs with transposes and broadcast batches,
// and the per-head products of attention on [B, T, H] tensors.
const rng = new Rng(99)
const rand = (n: number) => Float32Array.from({length: n}, () => rng.float() * 2 - 1)

/**
 * cublasLtMatmul with alpha 1, beta 0, column-major layouts: D[i + j·ldc] = Σ_p opA(A)[i, p]·opB(B)[p, j]
 * per batch entry, operand element (r, c) at base + r + c·ld + batch·stride.
 */
function ltReference(g: LtGemm, A: Float32Array, B: Float32Array, C: Float32Array, base = {A: 0, B: 0, C: 0}): void {
  const at = (l: LtGemm['A'], off: number, r: number, c: number, q: number) => off + r + c * l.ld + q * l.stride
  for (let q = 0; q < g.C.batchCount; q++) {
    for (let i = 0; i < g.m; i++) {
      for (let j = 0; j < g.n; j++) {
        let s = 0
        for (let p = 0; p < g.k; p++) {
          const a = g.transA ? A[at(g.A, base.A, p, i, q)] : A[at(g.A, base.A, i, p, q)]
          const b = g.transB ? B[at(g.B, base.B, j, p, q)] : B[at(g.B, base.B, p, j, q)]
          s += a * b
        }
        C[at(g.C, base.C, i, j, q)] = s
      }
    }
  }
}

function expectClose(got: Float32Array, want: Float32Array | Int32Array | Uint8Array, what: string): void {
  expect(got.length, what).toBe(want.length)
  for (let i = 0; i < got.length; i++) if (Math.abs(got[i] - want[i]) > 1e-4 * (1 + Math.abs(want[i]))) expect.fail(`${what}[${i}]: ${got[i]} vs ${want[i]}`)
}

describe('cuBLASLt layouts of row-major products', () => {
  beforeAll(async () => {
    await tf.setBackend('cpu')
  })

  it('BatchMatMul: every transpose, odd sizes, batch shapes equal or broadcast', () => {
    const cases: [number[], number[]][] = [
      [
        [3, 5],
        [5, 7],
      ],
      [
        [1, 1],
        [1, 1],
      ],
      [
        [2, 3, 4],
        [2, 4, 6],
      ],
      [
        [2, 3, 3, 4],
        [2, 3, 4, 5],
      ],
      [
        [4, 3, 2],
        [2, 5],
      ],
      [
        [3, 2],
        [4, 2, 6],
      ],
    ]
    for (const [as, bs] of cases) {
      for (const tA of [false, true]) {
        for (const tB of [false, true]) {
          const sw = (s: number[], t: boolean) => (t ? [...s.slice(0, -2), s[s.length - 1], s[s.length - 2]] : s)
          const [aShape, bShape] = [sw(as, tA), sw(bs, tB)]
          const [a, b] = [rand(aShape.reduce((p, x) => p * x, 1)), rand(bShape.reduce((p, x) => p * x, 1))]
          const plan = batchMatMulGemm(aShape, bShape, tA, tB)!
          const want = tf.tidy(() => tf.matMul(tf.tensor(a, aShape), tf.tensor(b, bShape), tA, tB))
          expect(plan.outShape, `${aShape}·${bShape} ${tA}${tB}`).toEqual(want.shape)
          const got = new Float32Array(want.size)
          ltReference(plan.gemm, b, a, got) // cuBLASLt's A is tfjs' b
          expectClose(got, want.dataSync(), `${aShape}·${bShape} ${tA}${tB}`)
          want.dispose()
        }
      }
    }
  })

  it('refuses batch shapes it cannot stride and sizes that do not fit', () => {
    expect(batchMatMulGemm([2, 3, 4], [3, 4, 5], false, false)).toBeNull()
    expect(batchMatMulGemm([2, 3, 3, 4], [3, 2, 4, 5], false, false)).toBeNull()
    expect(() =>
      ltGemm({rows: 3, cols: 4, ld: 4, batchStride: 0}, {rows: 5, cols: 2, ld: 2, batchStride: 0}, {rows: 3, cols: 2, ld: 2, batchStride: 0}, false, false, 1),
    ).toThrow(/do not fit/)
    expect(() =>
      ltGemm({rows: 3, cols: 4, ld: 3, batchStride: 0}, {rows: 4, cols: 2, ld: 2, batchStride: 0}, {rows: 3, cols: 2, ld: 2, batchStride: 0}, false, false, 1),
    ).toThrow(/row stride/)
  })

  it('attention: heads side by side in [B, T, H], probabilities [B, A, T, T], forward and backward products', () => {
    const [B, T, A, d] = [2, 5, 3, 4]
    const H = A * d
    const [q, k, v, dc] = [0, 1, 2, 3].map(() => rand(B * T * H))
    const p = rand(B * A * T * T)
    const g = attentionGemms(B, T, A, d)
    const run = (name: keyof typeof g, a: Float32Array, b: Float32Array, outSize: number) => {
      const out = new Float32Array(outSize)
      for (let s = 0; s < B; s++) {
        const o = g[name].offsets(s)
        ltReference(g[name].gemm, b, a, out, {A: o.b, B: o.a, C: o.c})
      }
      return out
    }
    const heads = (x: Float32Array) => tf.tensor(x, [B, T, A, d]).transpose([0, 2, 1, 3]) // [B, A, T, d]
    const merged = (t: tf.Tensor) => t.transpose([0, 2, 1, 3]).reshape([B, T, H]).dataSync() // [B, T, H]
    const P = () => tf.tensor(p, [B, A, T, T])
    tf.tidy(() => {
      expectClose(run('scores', q, k, B * A * T * T), tf.matMul(heads(q), heads(k), false, true).dataSync(), 'scores')
      expectClose(run('context', p, v, B * T * H), merged(tf.matMul(P(), heads(v))), 'context')
      expectClose(run('dProbs', dc, v, B * A * T * T), tf.matMul(heads(dc), heads(v), false, true).dataSync(), 'dProbs')
      expectClose(run('dV', p, dc, B * T * H), merged(tf.matMul(P(), heads(dc), true, false)), 'dV')
      expectClose(run('dQ', p, k, B * T * H), merged(tf.matMul(P(), heads(k))), 'dQ')
      expectClose(run('dK', p, q, B * T * H), merged(tf.matMul(P(), heads(q), true, false)), 'dK')
    })
  })
})
