import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {setCudaOptions} from '../../../../src/core/engine/cuda/backend.js'
import {cudaDeviceKernels, fallbackCounts, resetFallbackCounts} from '../../../../src/core/engine/cuda/register.js'
import {CUDA_STANDARD_KERNELS} from '../../../../src/core/engine/cuda/registry.js'
import {buildStandins} from '../../../helpers/cuda-standins.js'

// Every census kernel of the cuda backend (src/core/engine/cuda/kernels-*.ts) on the stand-in
// device (docs/cuda-standins.md) against tfjs' cpu backend on random inputs: odd sizes,
// broadcasting, empty tensors, int32 and bool; within 1e-5 relative; and none of them through
// the cpu fallback.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

/** Seeded uniform values in [lo, hi). */
function rand(n: number, seed: number, lo = -2, hi = 2): number[] {
  let s = seed >>> 0 || 1
  return Array.from({length: n}, () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return lo + ((s >>> 8) / 2 ** 24) * (hi - lo)
  })
}

const size = (shape: number[]) => shape.reduce((a, b) => a * b, 1)
const F = (shape: number[], seed: number, lo?: number, hi?: number) => tf.tensor(rand(size(shape), seed, lo, hi), shape)
const I = (shape: number[], seed: number, hi = 5) => tf.tensor(rand(size(shape), seed, 0, hi).map(Math.floor), shape, 'int32')
const B = (shape: number[], seed: number) => tf.tensor(rand(size(shape), seed, 0, 2).map(Math.floor), shape, 'bool')

/** f's outputs on cpu and on cuda: shapes, dtypes and values within 1e-5 relative; `kernels` never fell back. */
async function same(f: () => tf.Tensor | tf.Tensor[], kernels: string[]): Promise<void> {
  await tf.setBackend('cpu')
  const want = tf.tidy(() => [f()].flat().map((t) => ({shape: t.shape, dtype: t.dtype, v: Array.from(t.dataSync() as ArrayLike<number>)})))
  await tf.setBackend('cuda')
  resetFallbackCounts()
  const got = tf.tidy(() => [f()].flat().map((t) => ({shape: t.shape, dtype: t.dtype, v: Array.from(t.dataSync() as ArrayLike<number>)})))
  const fell = Object.keys(fallbackCounts()).filter((k) => kernels.includes(k))
  expect(fell, 'census kernels through the cpu fallback').toEqual([])
  expect(got.length).toBe(want.length)
  got.forEach((g, j) => {
    expect([g.shape, g.dtype]).toEqual([want[j].shape, want[j].dtype])
    g.v.forEach((x, i) => {
      const w = want[j].v[i]
      if (Number.isNaN(w)) expect(x).toBeNaN()
      else expect(Math.abs(x - w) / Math.max(Math.abs(w), 1), `output ${j} element ${i}: ${x} vs ${w}`).toBeLessThanOrEqual(1e-5)
    })
  })
}

describe.skipIf(skip)('cuda backend kernels on the stand-in device vs cpu', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
  })
  afterAll(async () => {
    await initBackend('cpu')
  })

  it('every standard kernel of the census has a device implementation', () => {
    expect(CUDA_STANDARD_KERNELS.filter((k) => !cudaDeviceKernels().includes(k))).toEqual([])
  })

  it('binary ops with broadcasting, odd sizes and empty tensors, float32 and int32', async () => {
    const ops = ['add', 'sub', 'mul', 'div', 'maximum', 'minimum', 'squaredDifference'] as const
    for (const [sa, sb] of [
      [[3, 5], [5]],
      [
        [2, 1, 7],
        [3, 1],
      ],
      [[0, 4], [4]],
      [[1], [2, 3]],
      [[], [4]],
    ]) {
      await same(() => ops.map((op) => tf[op](F(sa, 1), F(sb, 2, 0.5, 2))), ['Add', 'Sub', 'Multiply', 'RealDiv', 'Maximum', 'Minimum', 'SquaredDifference'])
      await same(() => [tf.add(I(sa, 3), I(sb, 4)), tf.sub(I(sa, 3), I(sb, 4)), tf.mul(I(sa, 3), I(sb, 4))], ['Add', 'Sub', 'Multiply'])
    }
  })

  it('comparisons and logic give bool', async () => {
    await same(
      () => [tf.equal(I([4, 3], 1, 3), I([3], 2, 3)), tf.greater(F([5, 2], 3), F([2], 4)), tf.less(F([7], 5), 0), tf.logicalNot(B([6], 6))],
      ['Equal', 'Greater', 'Less', 'LogicalNot'],
    )
    await same(
      () => [tf.logicalAnd(B([3, 4], 1), B([4], 2)), tf.greaterEqual(I([9], 3), I([9], 4)), tf.notEqual(F([0, 3], 1), F([3], 2))],
      ['LogicalAnd', 'GreaterEqual', 'NotEqual'],
    )
  })

  it('unary ops, Cast between float32, int32 and bool', async () => {
    const x = () => F([3, 7], 7)
    await same(
      () => [tf.neg(x()), tf.square(x()), tf.exp(x()), tf.tanh(x()), tf.relu(x()), tf.step(x()), tf.abs(x()), tf.erf(x()), tf.sigmoid(x())],
      ['Neg', 'Square', 'Exp', 'Tanh', 'Relu', 'Step', 'Abs', 'Erf', 'Sigmoid'],
    )
    await same(
      () => [tf.sqrt(F([11], 8, 0.1, 4)), tf.rsqrt(F([11], 8, 0.1, 4)), tf.log(F([11], 8, 0.1, 4)), tf.square(I([5], 9))],
      ['Sqrt', 'Rsqrt', 'Log', 'Square'],
    )
    await same(
      () => [
        tf.cast(F([13], 10, -5, 5), 'int32'),
        tf.cast(I([13], 11), 'float32'),
        tf.cast(F([13], 12, -1, 1), 'bool'),
        tf.cast(B([13], 13), 'float32'),
        tf.cast(I([0], 1), 'bool'),
      ],
      ['Cast'],
    )
  })

  it('reductions and ArgMax over any axes, keepDims, int32, empty', async () => {
    const x = () => F([3, 4, 5], 14)
    await same(
      () => [tf.sum(x()), tf.sum(x(), 1), tf.sum(x(), [0, 2], true), tf.max(x(), -1), tf.min(x(), 0), tf.mean(x(), [1, 2]), tf.prod(F([3, 3], 2, 0.5, 1.5), 1)],
      ['Sum', 'Max', 'Min', 'Mean', 'Prod'],
    )
    await same(
      () => [tf.sum(I([6, 7], 15), 0), tf.argMax(x(), 2), tf.argMax(x(), 0), tf.argMin(I([9], 16), 0), tf.sum(F([0, 3], 1), 0), tf.softmax(x())],
      ['Sum', 'ArgMax', 'ArgMin', 'Softmax'],
    )
    await same(() => [tf.any(B([4, 5], 3), 1), tf.all(B([4, 5], 4), 0)], ['Any', 'All'])
  })

  it('shape kernels: Reshape/ExpandDims alias, Transpose, Slice, SplitV, Concat, Pack, PadV2, Tile', async () => {
    const x = () => F([2, 3, 5], 17)
    await same(
      () => [x().reshape([6, 5]), x().expandDims(1), tf.transpose(x(), [2, 0, 1]), tf.slice(x(), [1, 0, 2], [1, 2, -1])],
      ['Reshape', 'ExpandDims', 'Transpose', 'Slice'],
    )
    await same(() => [...tf.split(x(), [1, 3, 1], 2), ...tf.split(I([4, 6], 1), 2, 0)], ['SplitV'])
    await same(
      () => [tf.concat([x(), F([2, 1, 5], 3)], 1), tf.concat([I([3], 1), I([0], 2), I([2], 3)]), tf.stack([F([3, 2], 1), F([3, 2], 2)], 1)],
      ['Concat', 'Pack'],
    )
    await same(
      () => [
        tf.pad(
          x(),
          [
            [0, 1],
            [2, 0],
            [1, 1],
          ],
          0.5,
        ),
        tf.tile(F([2, 3], 4), [2, 3]),
        tf.tile(I([3], 4), [2]),
      ],
      ['PadV2', 'Tile'],
    )
  })

  it('GatherV2, ScatterNd (duplicates add), Range, Select, ZerosLike, OnesLike, Fill', async () => {
    await same(() => [tf.gather(F([7, 3], 1), I([5], 2, 7)), tf.gather(F([2, 6, 3], 3), I([2, 2], 4, 6), 1), tf.gather(I([4], 2), I([0], 1))], ['GatherV2'])
    const idx = () => tf.tensor2d([[1], [3], [1], [0]], [4, 1], 'int32')
    await same(() => [tf.scatterND(idx(), F([4, 3], 5), [5, 3]), tf.scatterND(idx(), I([4], 6), [6])], ['ScatterNd'])
    await same(() => [tf.range(0, 11), tf.range(2, 7, 0.5, 'float32'), tf.range(5, 5)], ['Range'])
    await same(
      () => [tf.where(B([3, 4], 7), F([3, 4], 8), F([3, 4], 9)), tf.zerosLike(F([3, 2], 1)), tf.onesLike(I([5], 1)), tf.fill([2, 3], 2.5)],
      ['Select', 'ZerosLike', 'OnesLike', 'Fill'],
    )
  })

  it('MatMul and BatchMatMul through cuBLASLt: transposes, batches, a broadcast batch, odd and empty sizes', async () => {
    await same(
      () => [tf.matMul(F([5, 7], 1), F([7, 3], 2)), tf.matMul(F([7, 5], 3), F([3, 7], 4), true, true), tf.matMul(F([5, 7], 5), F([3, 7], 6), false, true)],
      ['BatchMatMul'],
    )
    await same(
      () => [
        tf.matMul(F([4, 3, 5], 7), F([4, 5, 2], 8)),
        tf.matMul(F([4, 3, 5], 9), F([5, 2], 10)),
        tf.matMul(F([3, 0], 1), F([0, 2], 2)),
        tf.matMul(F([0, 4], 1), F([4, 2], 2)),
      ],
      ['BatchMatMul'],
    )
  })

  it('async read (event-polled) and readSync agree; memory() reports the allocator; dispose frees', async () => {
    await tf.setBackend('cuda')
    const before = tf.memory() as unknown as {liveBytes: number; numTensors: number}
    const x = F([3, 5], 31)
    const y = tf.exp(x)
    expect(Array.from(await y.data())).toEqual(Array.from(y.dataSync()))
    const [b1, b2] = [B([5], 3), B([5], 3)]
    expect(Array.from(await b1.data())).toEqual(Array.from(b2.dataSync()))
    tf.dispose([b1, b2])
    expect((tf.memory() as unknown as {liveBytes: number}).liveBytes).toBeGreaterThan(before.liveBytes)
    tf.dispose([x, y])
    tf.disposeVariables()
  })

  it('--precision tf32: products through TF32 (inputs rounded to 10 mantissa bits), close to fp32 but not equal', async () => {
    await tf.setBackend('cuda')
    const product = () => tf.tidy(() => tf.matMul(F([8, 64], 21), F([64, 8], 22)).dataSync() as Float32Array)
    const fp32 = product()
    setCudaOptions({precision: 'tf32'})
    try {
      const tf32 = product()
      const err = tf32.reduce((m, x, i) => Math.max(m, Math.abs(x - fp32[i]) / Math.max(Math.abs(fp32[i]), 1)), 0)
      expect(err).toBeGreaterThan(1e-6)
      expect(err).toBeLessThan(1e-2)
    } finally {
      setCudaOptions({precision: 'fp32'})
    }
    expect(product()).toEqual(fp32)
  })
})
