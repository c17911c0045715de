import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {loadNative, nativeKernelCounts, startNative} from '../../../src/core/engine/native.js'
import {maskedMaxPool} from '../../../src/core/model/span-ft.js'
import {Draws, kernelChecks, nativeRuns, storage, withTfjs} from './helpers.js'

// The kernels of native-compare.ts (Equal, NotEqual, Greater, GreaterEqual, Less, LessEqual,
// LogicalAnd, LogicalOr, LogicalNot, Select, Step, Cast, ZerosLike, OnesLike) against tfjs' own
// cpu kernels on random inputs: ranks 0–4, broadcasting in every pattern, empty tensors, NaN,
// ±Infinity, −0 and repeated values (drawn from small sets, so that equality happens),
// float32/int32/bool, inputs whose storage is a view. Outputs must be equal element for element
// and served natively; gradients through tf.max, tf.maximum, tf.where and relu must agree.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

const draws = new Draws(4711)
const {expectSame, expectCloseGrads} = kernelChecks(draws)
const size = (shape: number[]): number => shape.reduce((a, b) => a * b, 1)
const pick = <T>(xs: readonly T[]): T => xs[draws.rng.int(xs.length)]

const FLOATS = [-2, -1, -0, 0, 0.5, 1, 2, 1e-30, NaN, Infinity, -Infinity] as const
const INTS = [-3, -1, 0, 0, 1, 2, 3, 2147483647, -2147483648] as const
type DType = 'float32' | 'int32' | 'bool'

/** Values drawn from a small set of each dtype (so equal pairs are common), NaN and ±Infinity included. */
function draw(dtype: DType, shape: number[]): tf.Tensor {
  const n = size(shape)
  if (dtype === 'float32') return tf.tensor(Float32Array.from({length: n}, () => pick(FLOATS)), shape, 'float32')
  if (dtype === 'int32') return tf.tensor(Int32Array.from({length: n}, () => pick(INTS)), shape, 'int32')
  return tf.tensor(Uint8Array.from({length: n}, () => draws.rng.int(2)), shape, 'bool')
}
/** Uniform floats (a max with ties only by chance). */
function rand(shape: number[], lo = -2, hi = 2): tf.Tensor {
  return tf.tensor(Float32Array.from({length: size(shape)}, () => lo + (hi - lo) * draws.rng.float()), shape)
}
/** A random shape of a rank, dims in [1, max]. */
const randShape = (rank: number, max = 5): number[] => Array.from({length: rank}, () => 1 + draws.rng.int(max))

/**
 * Two shapes that broadcast to a random output shape of `rank`: each axis of each side kept or
 * made 1 (never 1 on both sides unless the output's is), and a few leading axes of one side dropped.
 */
function broadcastPair(rank: number, max = 5): [number[], number[]] {
  const out = randShape(rank, max)
  const a = out.slice()
  const b = out.slice()
  out.forEach((d, i) => {
    const k = draws.rng.int(4)
    if (k === 1) a[i] = 1
    else if (k === 2) b[i] = 1
  })
  const drop = draws.rng.int(rank + 1)
  if (draws.rng.int(2) === 0) return [a.slice(drop), b]
  return [a, b.slice(drop)]
}

/** Fixed patterns: equal, scalar, leading, trailing, middle axis, both sides, different ranks, long rows. */
const PATTERNS: [number[], number[]][] = [
  [[7, 5], [7, 5]],
  [[], []],
  [[], [3, 4]],
  [[3, 4], []],
  [[1], [6]],
  [[1, 4], [3, 4]],
  [[4], [3, 4]],
  [[3, 5, 7], [3, 5, 1]], // [N, T, H] against [N, T, 1]
  [[3, 5, 7], [3, 1, 7]], // against [N, 1, H] (tf.max's gradient)
  [[3, 5, 7], [1, 5, 1]],
  [[3, 1, 7], [1, 5, 1]],
  [[3, 1], [1, 4]],
  [[2, 3, 4, 5], [2, 1, 4, 1]],
  [[2, 1, 4, 1], [1, 3, 1, 5]],
  [[2, 3, 4, 5], [5]],
  [[16, 40, 33], [16, 1, 33]], // long rows
  [[16, 40, 33], [16, 40, 1]],
  [[2, 600], [1, 600]],
]

/** A tensor whose storage is a view into x's (tfjs' own Slice of a contiguous box). */
function viewOf(x: tf.Tensor, begin: number[], sizes: number[]): tf.Tensor {
  return withTfjs(() => {
    const v = tf.slice(x, begin, sizes)
    expect(storage(v).buffer).toBe(storage(x).buffer)
    return v
  })
}

const COMPARISONS = {
  Equal: tf.equal,
  NotEqual: tf.notEqual,
  Greater: tf.greater,
  GreaterEqual: tf.greaterEqual,
  Less: tf.less,
  LessEqual: tf.lessEqual,
} as const
const LOGICAL = {LogicalAnd: tf.logicalAnd, LogicalOr: tf.logicalOr} as const
const KERNELS = [...Object.keys(COMPARISONS), ...Object.keys(LOGICAL), 'LogicalNot', 'Select', 'Step', 'Cast', 'ZerosLike', 'OnesLike']

describe.skipIf(!status.available)(`native comparison, logical, Select, Step, Cast and fill kernels agree with tfjs' cpu kernels${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
    expect(tf.getBackend()).toBe('cpu')
    for (const k of KERNELS) {
      expect(tf.getKernel(k, 'cpu'), k).toBeDefined()
      expect(nativeKernelCounts()[k], k).toBeDefined()
    }
  })

  it('comparisons: random broadcast pairs of ranks 0–4, float32/int32 (and bool for Equal/NotEqual), both operand orders', () => {
    for (const [name, op] of Object.entries(COMPARISONS)) {
      const dtypes: DType[] = name === 'Equal' || name === 'NotEqual' ? ['float32', 'int32', 'bool'] : ['float32', 'int32']
      for (const dtype of dtypes) {
        for (let rank = 0; rank <= 4; rank++) {
          for (let k = 0; k < 4; k++) {
            const [sa, sb] = broadcastPair(rank)
            expectSame(name, () => op(draw(dtype, sa), draw(dtype, sb)))
            expectSame(name, () => op(draw(dtype, sb), draw(dtype, sa)))
          }
        }
      }
    }
  })

  it('comparisons: every fixed pattern (scalar, leading, trailing, middle axis, both sides, long rows), both orders', () => {
    for (const [name, op] of Object.entries(COMPARISONS)) {
      for (const dtype of ['float32', 'int32'] as const) {
        for (const [sa, sb] of PATTERNS) {
          expectSame(name, () => op(draw(dtype, sa), draw(dtype, sb)))
          expectSame(name, () => op(draw(dtype, sb), draw(dtype, sa)))
        }
      }
    }
    // a tensor against itself, and NaN against NaN
    const x = draw('float32', [4, 6])
    for (const [name, op] of Object.entries(COMPARISONS)) {
      expectSame(name, () => op(x, x))
      expectSame(name, () => op(tf.tensor1d([NaN, NaN, 1, -0, Infinity]), tf.tensor1d([NaN, 1, NaN, 0, Infinity])))
      expectSame(name, () => op(tf.tensor1d([NaN, -Infinity, 0, 3]), tf.scalar(NaN)))
    }
  })

  it('comparisons and logical ops: empty tensors, views and transposes as inputs; bad shapes are left to tfjs', () => {
    for (const [name, op] of Object.entries(COMPARISONS)) {
      expectSame(name, () => op(draw('float32', [0, 3]), draw('float32', [1, 3])))
      expectSame(name, () => op(draw('int32', [2, 0, 3]), draw('int32', [2, 1, 3])))
      expectSame(name, () => op(draw('float32', [0]), draw('float32', [])))
      const big = draw('float32', [9, 6, 5])
      const v = viewOf(big, [3, 0, 0], [4, 6, 5])
      expect(storage(v).byteOffset).toBeGreaterThan(0)
      expectSame(name, () => op(v, viewOf(big, [1, 0, 0], [1, 6, 5])))
      expectSame(name, () => op(v, tf.transpose(draw('float32', [5, 1, 4]), [2, 1, 0]))) // [4, 1, 5]
      expectSame(name, () => op(tf.transpose(big, [1, 2, 0]), viewOf(big, [2, 0, 0], [1, 6, 5]).reshape([6, 5, 1])))
      expect(() => op(draw('float32', [2, 3]), draw('float32', [3, 2]))).toThrow() // tfjs' kernel throws
    }
    const bools = draw('bool', [7, 4, 3])
    const bv = viewOf(bools, [2, 0, 0], [3, 4, 3])
    for (const [name, op] of Object.entries(LOGICAL)) {
      expectSame(name, () => op(bv, viewOf(bools, [5, 0, 0], [1, 4, 3])))
      expectSame(name, () => op(draw('bool', [0, 2]), draw('bool', [1, 2])))
    }
    expectSame('LogicalNot', () => tf.logicalNot(bv))
    expectSame('LogicalNot', () => tf.logicalNot(draw('bool', [0, 4])))
  })

  it('LogicalAnd, LogicalOr, LogicalNot: ranks 0–4, every pattern, and bool storage holding 2 (tfjs keeps the raw byte)', () => {
    for (const [name, op] of Object.entries(LOGICAL)) {
      for (let rank = 0; rank <= 4; rank++) {
        for (let k = 0; k < 4; k++) {
          const [sa, sb] = broadcastPair(rank)
          expectSame(name, () => op(draw('bool', sa), draw('bool', sb)))
        }
      }
      for (const [sa, sb] of PATTERNS) expectSame(name, () => op(draw('bool', sa), draw('bool', sb)))
    }
    for (let rank = 0; rank <= 4; rank++) expectSame('LogicalNot', () => tf.logicalNot(draw('bool', randShape(rank))))
    const raw = tf.tensor(Uint8Array.of(2, 1, 0, 2, 1, 0), [6], 'bool')
    const other = tf.tensor(Uint8Array.of(1, 2, 2, 0, 0, 1), [6], 'bool')
    expectSame('LogicalAnd', () => tf.logicalAnd(raw, other))
    expectSame('LogicalOr', () => tf.logicalOr(raw, other))
    expectSame('LogicalNot', () => tf.logicalNot(raw))
    expectSame('Equal', () => tf.equal(raw, other))
    expectSame('Select', () => tf.where(raw, tf.range(0, 6), tf.range(10, 16)))
  })

  it('Select (tf.where): broadcast condition, t and e of ranks 0–4, float32/int32/bool and mixed dtypes, views', () => {
    for (let rank = 0; rank <= 4; rank++) {
      for (let k = 0; k < 4; k++) {
        const [sc, st] = broadcastPair(rank)
        for (const dtype of ['float32', 'int32', 'bool'] as const) {
          expectSame('Select', () => tf.where(draw('bool', sc), draw(dtype, st), draw(dtype, sc)))
        }
      }
    }
    for (const [sa, sb] of PATTERNS) expectSame('Select', () => tf.where(draw('bool', sa), draw('float32', sb), draw('float32', sb)))
    // tf.where does not match t's and e's dtypes: the kernel upcasts
    const [mixed] = expectSame('Select', () => tf.where(draw('bool', [4, 5]), draw('float32', [4, 5]), draw('int32', [4, 5])))
    expect(mixed.dtype).toBe('float32')
    expect(storage(mixed)).toBeInstanceOf(Float32Array)
    expectSame('Select', () => tf.where(draw('bool', [3, 4]), draw('bool', [3, 4]), draw('int32', [3, 4])))
    expectSame('Select', () => tf.where(draw('bool', [0, 4]), draw('float32', [0, 4]), draw('float32', [0, 4])))
    // tf.where's broadcastTo leaves a [1, 4] as is against [0, 4] (reps of 0): shapes differ, left to tfjs
    expectSame('Select', () => tf.where(draw('bool', [0, 4]), draw('float32', [0, 4]), draw('float32', [1, 4])), false)
    const big = draw('float32', [8, 7])
    expectSame('Select', () => tf.where(viewOf(draw('bool', [6, 7]), [2, 0], [3, 7]), viewOf(big, [1, 0], [3, 7]), tf.transpose(draw('float32', [7, 3]))))
    const [asInt] = expectSame('Select', () => tf.where(draw('bool', [5]), draw('int32', [5]), draw('int32', [5])))
    expect(storage(asInt)).toBeInstanceOf(Int32Array)
    asInt.dispose()
  })

  it('Select straight from runKernel: a float32 condition is read as numbers; a rank-1 condition against a matrix is left to tfjs', () => {
    const run = (c: tf.Tensor, t: tf.Tensor, e: tf.Tensor) => tf.engine().runKernel('Select', {condition: c, t, e}) as tf.Tensor
    expectSame('Select', () => run(tf.tensor1d([1, 0, 2, NaN, 1]), draw('float32', [5]), draw('float32', [5])))
    expectSame('Select', () => run(draw('bool', [3]), draw('float32', [3, 4]), draw('float32', [3, 4])), false)
    expectSame('Select', () => run(draw('bool', [3, 4]), draw('float32', [3, 4]), draw('float32', [4])), false)
  })

  it('Step: ranks 0–4, NaN, ±Infinity, ±0, alpha 0, 0.3, −1 and NaN; views; int32 is left to tfjs', () => {
    for (let rank = 0; rank <= 4; rank++) {
      for (const alpha of [0, 0.3, -1, NaN]) expectSame('Step', () => tf.step(draw('float32', randShape(rank)), alpha))
    }
    expectSame('Step', () => tf.step(draw('float32', [0, 3])))
    expectSame('Step', () => tf.step(viewOf(draw('float32', [6, 5]), [2, 0], [3, 5]), 0.1))
    const run = (x: tf.Tensor, attrs: Record<string, unknown>) => tf.engine().runKernel('Step', {x}, attrs as tf.NamedAttrMap) as tf.Tensor
    expectSame('Step', () => run(draw('float32', [4, 4]), {})) // no alpha: NaN in both
    expectSame('Step', () => run(draw('int32', [4, 4]), {alpha: 0}), false)
  })

  it('Cast: bool/int32 → float32 and float32/bool → int32 exactly, as real Float32Array/Int32Array; other pairs left to tfjs', () => {
    for (let rank = 0; rank <= 4; rank++) {
      const shape = randShape(rank)
      expectSame('Cast', () => tf.cast(draw('bool', shape), 'float32'))
      expectSame('Cast', () => tf.cast(tf.tensor(Int32Array.from({length: size(shape)}, () => draws.rng.int(2001) - 1000), shape, 'int32'), 'float32'))
      expectSame('Cast', () => tf.cast(draw('float32', shape), 'int32'))
      expectSame('Cast', () => tf.cast(draw('bool', shape), 'int32'))
    }
    // truncation toward 0, NaN and ±Infinity to 0, wrapping beyond 2^31 (Int32Array.from's conversion)
    const odd = tf.tensor1d([2.5, -2.5, 0.99, -0.99, -0, NaN, Infinity, -Infinity, 3e9, -3e9, 2147483647, 1e20, 16777217])
    const [ints] = expectSame('Cast', () => tf.cast(odd, 'int32'))
    expect(storage(ints)).toBeInstanceOf(Int32Array)
    const [floats] = expectSame('Cast', () => tf.cast(draw('bool', [3, 4]), 'float32'))
    expect(storage(floats)).toBeInstanceOf(Float32Array) // tfjs' cast keeps the Uint8Array under float32
    expectSame('Cast', () => tf.cast(draw('bool', [0, 3]), 'float32'))
    const ints5x4 = tf.tensor(Int32Array.from({length: 20}, () => draws.rng.int(2001) - 1000), [5, 4], 'int32')
    expectSame('Cast', () => tf.cast(viewOf(ints5x4, [1, 0], [3, 4]), 'float32'))
    // int32 beyond ±2^24 becomes the nearest float32 (tfjs' cast keeps the Int32Array, and with it the exact integer)
    const huge = [16777217, -16777219, 2147483647, -2147483648, 123456789]
    const [rounded] = expectSame('Cast', () => tf.cast(tf.tensor1d(huge.map((v) => v % 2 ** 24), 'int32'), 'float32'))
    rounded.dispose()
    tf.tidy(() => {
      expect(Array.from(tf.cast(tf.tensor1d(huge, 'int32'), 'float32').dataSync())).toEqual(huge.map(Math.fround))
      expect(Array.from(withTfjs(() => tf.cast(tf.tensor1d(huge, 'int32'), 'float32')).dataSync())).toEqual(huge)
    })
    // a float32 tensor aliasing a bool array (tfjs' own cast) is read as its numbers
    const aliased = withTfjs(() => tf.cast(draw('bool', [2, 5]), 'float32'))
    expect(storage(aliased)).toBeInstanceOf(Uint8Array)
    expectSame('Cast', () => tf.cast(aliased, 'int32'))
    // left to tfjs: to bool, to the same dtype, complex64
    expectSame('Cast', () => tf.cast(draw('float32', [3, 4]), 'bool'), false)
    expectSame('Cast', () => tf.cast(draw('int32', [3, 4]), 'bool'), false)
    expectSame('Cast', () => tf.cast(draw('float32', [3, 4]), 'float32'), false)
    expectSame('Cast', () => tf.cast(draw('int32', [3, 4]), 'int32'), false)
    expectSame('Cast', () => tf.real(tf.cast(draw('float32', [3]), 'complex64')), false)
    tf.dispose([ints, floats, aliased])
  })

  it('ZerosLike and OnesLike: float32 (pooled) and int32 of ranks 0–4 and empty; bool is left to tfjs', () => {
    for (const [name, op] of [['ZerosLike', tf.zerosLike], ['OnesLike', tf.onesLike]] as const) {
      for (const dtype of ['float32', 'int32'] as const) {
        for (let rank = 0; rank <= 4; rank++) expectSame(name, () => op(draw(dtype, randShape(rank))))
        expectSame(name, () => op(draw(dtype, [3, 0])))
      }
      expectSame(name, () => op(draw('bool', [3, 2])), false)
    }
    const [z] = expectSame('ZerosLike', () => tf.zerosLike(rand([4, 5])))
    expect(storage(z)).toBeInstanceOf(Float32Array)
    z.dispose()
  })

  it('gradients through tf.max, tf.min, tf.maximum, tf.where, relu and span fine-tuning\'s maskedMaxPool agree, and run these kernels natively', () => {
    const before = Object.fromEntries(['Equal', 'GreaterEqual', 'Less', 'Cast', 'Select', 'LogicalNot', 'Step', 'ZerosLike'].map((k) => [k, nativeRuns(k)]))
    const x = rand([4, 7, 6])
    const tied = draw('float32', [4, 7, 6]).clipByValue(-2, 2) // repeated values: ties in the max
    for (const axis of [0, 1, 2, [1, 2]]) {
      expectCloseGrads(() => tf.grads((a: tf.Tensor) => tf.max(a, axis).square().sum())([x]))
      expectCloseGrads(() => tf.grads((a: tf.Tensor) => tf.max(a, axis, true).mul(2).sum())([tied]))
      expectCloseGrads(() => tf.grads((a: tf.Tensor) => tf.min(a, axis).sum())([tied]))
    }
    // (tfjs' Maximum/Minimum gradients do not reduce over broadcast axes: operands of one shape)
    const y = rand([4, 7, 6])
    expectCloseGrads(() => tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.maximum(a, b).square().sum())([x, y]))
    expectCloseGrads(() => tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.minimum(a, b).square().sum())([tied, draw('float32', [4, 7, 6]).clipByValue(-2, 2)]))
    const cond = draw('bool', [4, 7, 1])
    expectCloseGrads(() => tf.grads((a: tf.Tensor, b: tf.Tensor) => tf.where(cond, a, b.slice([0, 0, 0], [4, 1, 6]).tile([1, 7, 1])).square().sum())([x, y]))
    expectCloseGrads(() => tf.grads((a: tf.Tensor) => tf.relu(a).mul(a).sum())([tied]))
    // span fine-tuning's masked max-pool: tf.max over the span axis, greater, tile, where
    const mask = tf.tensor2d([1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1], [4, 7])
    expectCloseGrads(() => tf.grads((a: tf.Tensor) => maskedMaxPool(a as tf.Tensor3D, mask as tf.Tensor2D).square().sum())([x]))
    for (const [k, n] of Object.entries(before)) expect(nativeRuns(k), `${k} ran natively in a gradient`).toBeGreaterThan(n)
  })
})
