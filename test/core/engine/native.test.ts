import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {collapse, collapsePerm} from '../../../src/core/engine/native-kernels.js'
import {loadNative, nativeKernelCounts, registerNativeKernels, startNative} from '../../../src/core/engine/native.js'
import {Draws, nativeAndReference} from './helpers.js'

// Every native kernel against tfjs' own cpu kernel (the reference it mirrors) on random inputs:
// odd sizes, broadcasting, empty tensors, transposes. Skipped only when the addon is not built.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

const draws = new Draws(12345)
const both = (f: () => tf.Tensor | tf.Tensor[]) => nativeAndReference(draws, f)

/** Uniform floats in [lo, hi) of a shape, from a seeded generator. */
function rand(shape: number[], lo = -2, hi = 2): tf.Tensor {
  const n = shape.reduce((a, b) => a * b, 1)
  return tf.tensor(Float32Array.from({length: n}, () => lo + (hi - lo) * draws.rng.float()), shape)
}


/** Same shapes and dtypes; values within rtol·max|ref| + atol. */
function expectClose(f: () => tf.Tensor | tf.Tensor[], rtol = 1e-5, atol = 1e-6): void {
  const {nat, ref} = both(f)
  expect(nat.length).toBe(ref.length)
  nat.forEach((n, i) => {
    const r = ref[i]
    expect(n.shape).toEqual(r.shape)
    expect(n.dtype).toBe(r.dtype)
    const a = n.dataSync()
    const b = r.dataSync()
    let scale = 0
    for (const v of b) if (Number.isFinite(v)) scale = Math.max(scale, Math.abs(v))
    for (let j = 0; j < b.length; j++) {
      if (Number.isNaN(b[j])) expect(Number.isNaN(a[j])).toBe(true)
      else if (!Number.isFinite(b[j])) expect(a[j]).toBe(b[j])
      else if (Math.abs(a[j] - b[j]) > rtol * scale + atol) expect(`${j}: ${a[j]}`).toBe(`${j}: ${b[j]}`)
    }
  })
  tf.dispose([...nat, ...ref])
}

describe.skipIf(!status.available)(`native kernels agree with tfjs' cpu kernels${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
    expect(tf.getBackend()).toBe('cpu')
  })

  it('reports its BLAS and threads', () => {
    expect(status.blas.length).toBeGreaterThan(0)
    expect(loadNative().threads).toBeGreaterThanOrEqual(1)
    expect(registerNativeKernels()).toEqual(expect.arrayContaining(['BatchMatMul', '_FusedMatMul', 'Add', 'Softmax', 'Sum', 'Transpose']))
  })

  it('BatchMatMul: odd sizes, every transpose, batches, broadcast batches, empty', () => {
    for (const [ta, tb] of [[false, false], [true, false], [false, true], [true, true]]) {
      const [M, K, N] = [7, 13, 5]
      const a = rand(ta ? [K, M] : [M, K])
      const b = rand(tb ? [N, K] : [K, N])
      expectClose(() => tf.matMul(a, b, ta, tb))
      const a3 = rand(ta ? [3, K, M] : [3, M, K])
      const b3 = rand(tb ? [3, N, K] : [3, K, N])
      expectClose(() => tf.matMul(a3, b3, ta, tb))
      expectClose(() => tf.matMul(a3, b, ta, tb)) // b broadcast over the batch
      expectClose(() => tf.matMul(a, b3, ta, tb)) // a broadcast over the batch
    }
    expectClose(() => tf.matMul(rand([2, 3, 4, 9]), rand([2, 3, 9, 6])))
    expectClose(() => tf.matMul(rand([2, 1, 4, 9]), rand([1, 3, 9, 6]))) // general broadcast: tfjs' own kernel
    expectClose(() => tf.matMul(rand([0, 5]), rand([5, 3])))
    expectClose(() => tf.matMul(rand([4, 0]), rand([0, 3]))) // K = 0: zeros
    expectClose(() => tf.matMul(rand([0, 4, 5]), rand([0, 5, 3])))
    // the reference runs count as fallbacks too: one per expectClose, plus the general broadcast case natively refused
    const c = nativeKernelCounts().BatchMatMul
    expect(c.native).toBe(20)
    expect(c.fallback).toBe(c.native + 2)
  })

  it('BatchMatMul: large enough to split across threads (rows, columns, batch)', () => {
    expectClose(() => tf.matMul(rand([257, 190]), rand([190, 131])), 1e-5, 1e-5)
    expectClose(() => tf.matMul(rand([3, 517]), rand([517, 1031])), 1e-5, 1e-5)
    expectClose(() => tf.matMul(rand([190, 257]), rand([131, 190]), true, true), 1e-5, 1e-5)
    expectClose(() => tf.matMul(rand([37, 33, 65]), rand([37, 65, 29])), 1e-5, 1e-5)
  })

  it('_FusedMatMul: bias and linear, relu, sigmoid; other activations fall back', () => {
    const before = nativeKernelCounts()._FusedMatMul
    const a = rand([9, 11])
    const b = rand([11, 6])
    for (const activation of ['linear', 'relu', 'sigmoid', 'elu', 'relu6'] as const) {
      expectClose(() => tf.fused.matMul({a, b, bias: rand([6]), activation}))
      expectClose(() => tf.fused.matMul({a, b: rand([6, 11]), transposeB: true, bias: rand([9, 1]), activation}))
    }
    const after = nativeKernelCounts()._FusedMatMul
    expect(after.native - before.native).toBe(6) // linear, relu, sigmoid × 2
  })

  it('binary ops with broadcasting, scalars, NaN and empty tensors', () => {
    const pairs: [number[], number[]][] = [[[37, 41], [37, 41]], [[37, 41], [41]], [[37, 1], [1, 41]], [[5, 1, 7], [3, 1]], [[6, 5], []], [[], [4]], [[0, 3], [3]], [[2, 3, 4, 5], [3, 1, 5]]]
    const ops = [tf.add, tf.sub, tf.mul, tf.div, tf.maximum, tf.minimum, tf.squaredDifference]
    for (const [sa, sb] of pairs) for (const op of ops) {
      const a = rand(sa)
      const b = rand(sb, 0.5, 2)
      expectClose(() => op(a, b))
    }
    expectClose(() => tf.add(rand([300, 257]), rand([257]))) // threaded rows
    const withNaN = tf.tensor1d([1, NaN, -3, 4])
    for (const op of [tf.maximum, tf.minimum, tf.add]) expectClose(() => op(withNaN, tf.tensor1d([NaN, 2, 5, -1])))
  })

  it('unary ops, including a size split across threads and an empty tensor', () => {
    const x = rand([100003])
    const pos = rand([1001], 0.01, 5)
    const ops: [(t: tf.Tensor) => tf.Tensor, tf.Tensor][] = [
      [tf.exp, x], [tf.log, pos], [tf.erf, x], [tf.sqrt, pos], [tf.rsqrt, pos], [tf.square, x], [tf.neg, x],
      [tf.tanh, x], [tf.sigmoid, x], [tf.relu, x], [tf.abs, x], [tf.floor, x], [tf.reciprocal, pos],
    ]
    for (const [op, t] of ops) expectClose(() => op(t))
    expectClose(() => tf.exp(rand([0, 4])))
  })

  it('Exp, Sigmoid (relative) and Erf (absolute) elementwise over their whole range, with ±Inf and NaN', () => {
    const specials = tf.tensor1d([Infinity, -Infinity, NaN, 0, -0, 88.7, 88.8, -87.3, -87.4, -103, 1e-30])
    // erf: both are Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), tfjs' in double, ours in float (≈4 ulp of 1)
    const tolerance = (op: unknown, ref: number) => (op === tf.erf ? 5e-7 : 2e-6 * Math.abs(ref) + 1e-37)
    for (const op of [tf.exp, tf.erf, tf.sigmoid]) {
      for (const x of [rand([20011], -100, 100), rand([20011], -6, 6), specials]) {
        const {nat, ref} = both(() => op(x))
        const a = nat[0].dataSync()
        const b = ref[0].dataSync()
        for (let j = 0; j < b.length; j++) {
          if (Number.isNaN(b[j]) || !Number.isFinite(b[j])) expect(a[j]).toBe(b[j])
          else if (Math.abs(a[j] - b[j]) > tolerance(op, b[j])) expect(`${op.name} ${j}: ${a[j]}`).toBe(`${op.name} ${j}: ${b[j]}`)
        }
        tf.dispose([...nat, ...ref])
      }
    }
  })

  it('Softmax over the last axis, with its gradient', () => {
    expectClose(() => tf.softmax(rand([17, 1001], -20, 20)))
    expectClose(() => tf.softmax(rand([3, 5, 7])))
    expectClose(() => tf.softmax(rand([0, 4])))
    const x = rand([6, 9])
    const dy = rand([6, 9])
    expectClose(() => tf.grad((t: tf.Tensor) => tf.softmax(t).mul(dy).sum())(x))
  })

  it('Sum, Mean, Max, Min over contiguous and other axes, keepDims, empty', () => {
    const x = rand([7, 9, 11])
    const axes: (number | number[] | undefined)[] = [0, 1, 2, -1, [0, 1], [1, 2], [0, 1, 2], [0, 2], undefined]
    for (const axis of axes) for (const keep of [false, true]) {
      expectClose(() => tf.sum(x, axis, keep))
      expectClose(() => tf.mean(x, axis, keep))
      expectClose(() => tf.max(x, axis, keep))
      expectClose(() => tf.min(x, axis, keep))
    }
    expectClose(() => tf.sum(rand([5000, 3]), 0)) // long reduction
    expectClose(() => tf.sum(rand([3, 0]), 1))
    expectClose(() => tf.sum(rand([0, 5]), 0)) // nothing to reduce: tfjs' kernel
    expectClose(() => tf.max(tf.tensor2d([[1, NaN], [3, 2]]), 1))
  })

  it('ArgMax, ArgMin over the last axis: the first extreme index, ties, NaN, rows split across threads; other axes fall back', () => {
    const before = nativeKernelCounts().ArgMax?.native ?? 0
    const x = rand([7, 9, 11])
    for (const axis of [-1, 2]) {
      expectClose(() => tf.argMax(x, axis))
      expectClose(() => tf.argMin(x, axis))
    }
    expectClose(() => tf.argMax(x, 0)) // not the last axis: tfjs' kernel
    const ties = tf.tensor2d([[1, 3, 3, 0], [2, 2, 2, 2], [NaN, 5, 1, 0], [0, NaN, 4, 4], [-Infinity, -Infinity, -Infinity, -Infinity]])
    expectClose(() => tf.argMax(ties, 1))
    expectClose(() => tf.argMin(ties, 1))
    expectClose(() => tf.argMax(rand([64, 30522]), 1)) // a decoder's logits: rows over both threads
    expectClose(() => tf.argMax(rand([30522]))) // one row
    expect(nativeKernelCounts().ArgMax.native - before).toBe(5) // axes -1 and 2, ties, the decoder, one row
    tf.dispose([x, ties])
  })

  it('Transpose: permutations, size-1 axes, a large 2-D transpose', () => {
    const x = rand([3, 4, 5])
    for (const perm of [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]]) expectClose(() => tf.transpose(x, perm))
    expectClose(() => tf.transpose(rand([2, 3, 4, 5]), [0, 2, 1, 3]))
    expectClose(() => tf.transpose(rand([1, 7, 1, 3]), [3, 2, 0, 1]))
    expectClose(() => tf.transpose(rand([257, 513])))
    expectClose(() => tf.transpose(rand([0, 3])))
  })

  it('GatherV2 of float32 and int32 along any axis; out-of-range indices still throw', () => {
    const table = rand([50, 9])
    const idx = tf.tensor1d([3, 0, 49, 3, 17, 8, 8, 1, 2, 44, 5, 6, 7], 'int32')
    expectClose(() => tf.gather(table, idx))
    expectClose(() => tf.gather(table, tf.tensor1d([8, 0, 3, 3, 5], 'int32'), 1))
    expectClose(() => tf.gather(table, tf.tensor2d([[1, 2], [3, 4]], [2, 2], 'int32')))
    expectClose(() => tf.gather(tf.tensor2d([[1, 2], [3, 4], [5, 6]], [3, 2], 'int32'), tf.tensor1d([2, 0], 'int32')))
    expectClose(() => tf.gather(table, tf.tensor1d([], 'int32')))
    expect(() => tf.gather(table, tf.tensor1d([50], 'int32'))).toThrow()
  })

  it('ScatterNd sums duplicate indices, for rows and for elements', () => {
    const rows = tf.tensor2d([[1], [4], [1], [0]], [4, 1], 'int32')
    expectClose(() => tf.scatterND(rows, rand([4, 6]), [5, 6]))
    const cells = tf.tensor2d([[0, 1], [2, 2], [0, 1]], [3, 2], 'int32')
    expectClose(() => tf.scatterND(cells, rand([3]), [3, 4]))
  })

  it('SplitV along every axis, with -1 sizes and empty pieces', () => {
    const x = rand([6, 10, 3])
    expectClose(() => tf.split(x, 2, 0))
    expectClose(() => tf.split(x, [3, 0, 5, 2], 1))
    expectClose(() => tf.split(x, [1, -1], 2))
    expectClose(() => tf.split(rand([0, 4]), 2, 1))
    expect(nativeKernelCounts().SplitV.native).toBe(4)
  })

  it('gradients through native matmul, broadcast add and reductions match', () => {
    const a = rand([5, 8])
    const w = rand([6, 8])
    const bias = rand([6])
    const f = (x: tf.Tensor, y: tf.Tensor, c: tf.Tensor) => tf.matMul(x, y, false, true).add(c).relu().square().mean()
    expectClose(() => tf.grads(f)([a, w, bias]))
    const g = (x: tf.Tensor, y: tf.Tensor) => tf.concat([x, y], 1).square().sum() // concat's gradient is SplitV
    expectClose(() => tf.grads(g)([a, rand([5, 3])]))
  })
})

describe('shape helpers', () => {
  it('collapse merges axes walked alike and drops size-1 axes', () => {
    expect(collapse([4, 5, 6], [[30, 6, 1], [30, 6, 1]])).toEqual({shape: [120], strides: [[1], [1]]})
    expect(collapse([4, 5, 6], [[30, 6, 1], [0, 0, 1]])).toEqual({shape: [20, 6], strides: [[6, 1], [0, 1]]})
    expect(collapse([1, 1], [[1, 1], [0, 0]])).toEqual({shape: [1], strides: [[1], [1]]})
  })

  it('collapsePerm merges input axes that stay adjacent', () => {
    expect(collapsePerm([2, 3, 4, 5], [0, 1, 3, 2])).toEqual({shape: [6, 4, 5], perm: [0, 2, 1]})
    expect(collapsePerm([2, 3, 4, 5], [0, 2, 1, 3])).toEqual({shape: [2, 3, 4, 5], perm: [0, 2, 1, 3]})
    expect(collapsePerm([1, 7, 1, 3], [3, 2, 0, 1])).toEqual({shape: [7, 3], perm: [1, 0]})
  })
})
