import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {copyBox} from '../../../src/core/engine/native-layout.js'
import {loadNative, nativeKernelCounts, startNative} from '../../../src/core/engine/native.js'
import {Draws, kernelChecks, storage, withTfjs} from './helpers.js'

// The data-movement kernels of native-layout.ts (Concat, Pack, Unpack, Slice, PadV2, Tile,
// OneHot) against tfjs' own cpu kernels on random inputs: ranks 1–4, every axis (negative ones
// too), odd and empty sizes, float32/int32/bool, inputs whose storage is a view. Outputs must be
// equal element for element, served natively, and never share storage with an input.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

const draws = new Draws(2024)
const {expectSame, expectCloseGrads} = kernelChecks(draws)
const size = (shape: number[]): number => shape.reduce((a, b) => a * b, 1)

function rand(shape: number[], lo = -2, hi = 2): tf.Tensor {
  return tf.tensor(Float32Array.from({length: size(shape)}, () => lo + (hi - lo) * draws.rng.float()), shape)
}
function randInt(shape: number[], lo = -50, hi = 50): tf.Tensor {
  return tf.tensor(Int32Array.from({length: size(shape)}, () => lo + draws.rng.int(hi - lo)), shape, 'int32')
}
function randBool(shape: number[]): tf.Tensor {
  return tf.tensor(Uint8Array.from({length: size(shape)}, () => draws.rng.int(2)), shape, 'bool')
}
function randOf(dtype: 'float32' | 'int32' | 'bool', shape: number[]): tf.Tensor {
  return dtype === 'float32' ? rand(shape) : dtype === 'int32' ? randInt(shape) : randBool(shape)
}
/** A random shape of a rank, dims in [1, 6] (odd sizes likely). */
const randShape = (rank: number, max = 6): number[] => Array.from({length: rank}, () => 1 + draws.rng.int(max))

/** A tensor whose storage is a view into x's (tfjs' own Slice of a contiguous box). */
function viewOf(x: tf.Tensor, begin: number[], sizes: number[]): tf.Tensor {
  return withTfjs(() => {
    const v = tf.slice(x, begin, sizes)
    expect(storage(v).buffer).toBe(storage(x).buffer)
    return v
  })
}

describe.skipIf(!status.available)(`native layout kernels agree with tfjs' cpu kernels${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
    expect(tf.getBackend()).toBe('cpu')
    for (const k of ['Concat', 'Pack', 'Unpack', 'Slice', 'PadV2', 'Tile', 'OneHot']) expect(nativeKernelCounts()[k], k).toBeDefined()
  })

  it('Concat: ranks 1–4, every axis (negative too), 2–4 inputs, float32/int32/bool, long and short rows', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 1; rank <= 4; rank++) {
        for (let axis = -rank; axis < rank; axis++) {
          const shape = randShape(rank, rank <= 2 ? 40 : 6)
          const ax = axis < 0 ? axis + rank : axis
          const xs = Array.from({length: 2 + draws.rng.int(3)}, () => randOf(dtype, shape.map((d, i) => (i === ax ? 1 + draws.rng.int(5) : d))))
          expectSame('Concat', () => tf.concat(xs, axis))
        }
      }
    }
  })

  it('Concat: empty inputs, an empty output, one input (copied, not aliased), views and transposes as inputs', () => {
    const a = rand([3, 5])
    expectSame('Concat', () => tf.concat([a, rand([3, 0]), rand([3, 2])], 1))
    expectSame('Concat', () => tf.concat([rand([0, 5]), a, rand([0, 5])], 0))
    expectSame('Concat', () => tf.concat([rand([0, 5]), rand([0, 3])], 1)) // nothing to copy
    const [one] = expectSame('Concat', () => tf.concat([a, rand([3, 0])], 1))
    expect(storage(one).buffer).not.toBe(storage(a).buffer)
    one.dispose()
    const big = rand([9, 7, 5])
    const v = viewOf(big, [2, 0, 0], [4, 7, 5])
    expect(storage(v).byteOffset).toBeGreaterThan(0)
    const t = tf.transpose(rand([5, 3, 4]), [2, 1, 0]) // [4, 3, 5]
    expectSame('Concat', () => tf.concat([v, t], 1))
    expectSame('Concat', () => tf.concat([v, viewOf(big, [6, 0, 0], [3, 7, 5])], 0))
    expectSame('Concat', () => tf.concat([tf.concat([v, v], 2), viewOf(big, [0, 0, 0], [4, 7, 5]).tile([1, 1, 2])], 0))
    // mixed dtypes reach the kernel (tfjs writes them into the first input's dtype): left to tfjs
    expectSame('Concat', () => tf.concat([randInt([2, 3]), rand([2, 3])], 1), false)
    expect(() => tf.concat([rand([2, 3]), rand([3, 3])], 1)).toThrow()
  })

  it('Slice: ranks 1–4, random boxes, size −1 and a number begin, float32/int32/bool; never a view', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 1; rank <= 4; rank++) {
        for (let k = 0; k < 6; k++) {
          const shape = randShape(rank, rank <= 2 ? 70 : 7)
          const begin = shape.map((d) => draws.rng.int(d))
          const sizes = shape.map((d, i) => (draws.rng.int(4) === 0 ? -1 : draws.rng.int(d - begin[i] + 1)))
          const x = randOf(dtype, shape)
          const [out] = expectSame('Slice', () => tf.slice(x, begin, sizes))
          expect(storage(out).buffer).not.toBe(storage(x).buffer)
          out.dispose()
        }
      }
    }
    const x = rand([6, 5, 4])
    expectSame('Slice', () => tf.slice(x, 2)) // begin for the first axis only, sizes to the end
    expectSame('Slice', () => tf.slice(x, [1, 1], [2, -1]))
    expectSame('Slice', () => tf.slice(x, [0, 0, 0], [6, 5, 4])) // the whole tensor
    expectSame('Slice', () => tf.slice(x, [1, 0, 0], [0, 5, 4])) // empty
    expect(() => tf.slice(x, [4, 0, 0], [3, 5, 4])).toThrow() // outside x: tfjs' kernel throws
  })

  it('Slice of a contiguous box copies (tfjs returns a view), also from a view and a transpose', () => {
    const x = rand([8, 6, 5])
    const [own] = expectSame('Slice', () => tf.slice(x, [2, 0, 0], [3, 6, 5]))
    expect(storage(own).buffer).not.toBe(storage(x).buffer)
    // tfjs' own kernel aliases the input here: the reason for copying
    const ref = viewOf(x, [2, 0, 0], [3, 6, 5])
    expect(Array.from(own.dataSync())).toEqual(Array.from(ref.dataSync()))
    const v = viewOf(x, [3, 0, 0], [5, 6, 5])
    for (const [begin, sizes] of [[[1, 0, 0], [2, 6, 5]], [[0, 2, 1], [5, 3, 3]], [[4, 5, 4], [1, 1, 1]]]) {
      const [s] = expectSame('Slice', () => tf.slice(v, begin, sizes))
      expect(storage(s).buffer).not.toBe(storage(x).buffer)
    }
    const t = tf.transpose(x, [2, 0, 1]) // [5, 8, 6]
    expectSame('Slice', () => tf.slice(t, [1, 2, 3], [3, 4, 2]))
  })

  it('PadV2: ranks 1–4, random paddings, constant values, float32/int32/bool, empty and view inputs', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 1; rank <= 4; rank++) {
        for (let k = 0; k < 4; k++) {
          const x = randOf(dtype, randShape(rank, rank <= 2 ? 50 : 5))
          const paddings = x.shape.map(() => [draws.rng.int(4), draws.rng.int(4)] as [number, number])
          const value = dtype === 'bool' ? k % 2 : [0, 1.5, -3, 7][k]
          expectSame('PadV2', () => tf.pad(x, paddings, value))
        }
      }
    }
    expectSame('PadV2', () => tf.pad(rand([0, 3]), [[1, 2], [0, 1]], 2))
    expectSame('PadV2', () => tf.pad(rand([4, 3]), [[0, 0], [0, 0]]))
    expectSame('PadV2', () => tf.pad(viewOf(rand([7, 9]), [2, 0], [3, 9]), [[1, 1], [2, 0]], -1))
    expectSame('PadV2', () => tf.pad(rand([3, 4, 5]).transpose([1, 2, 0]), [[0, 1], [2, 2], [1, 0]]))
  })

  it('Pack: 2–4 inputs of ranks 0–3, every axis (negative too), float32/int32/bool, views; one input is a reshape left to tfjs', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 0; rank <= 3; rank++) {
        for (let axis = -(rank + 1); axis <= rank; axis++) {
          const shape = randShape(rank, 9)
          const xs = Array.from({length: 2 + draws.rng.int(3)}, () => randOf(dtype, shape))
          expectSame('Pack', () => tf.stack(xs, axis))
        }
      }
    }
    const big = rand([6, 40])
    expectSame('Pack', () => tf.stack([viewOf(big, [1, 0], [2, 40]), viewOf(big, [4, 0], [2, 40]), rand([40, 2]).transpose()], 1))
    expectSame('Pack', () => tf.stack([rand([2, 0]), rand([2, 0])], 1))
    expectSame('Pack', () => tf.stack([rand([3, 2])]), false)
  })

  it('Unpack: ranks 1–4, every axis (negative too), float32/int32/bool, a view input', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 1; rank <= 4; rank++) {
        for (let axis = -rank; axis < rank; axis++) {
          const x = randOf(dtype, randShape(rank, rank <= 2 ? 40 : 5))
          expectSame('Unpack', () => tf.unstack(x, axis))
        }
      }
    }
    expectSame('Unpack', () => tf.unstack(viewOf(rand([5, 3, 4]), [1, 0, 0], [3, 3, 4]), 2))
    expectSame('Unpack', () => tf.unstack(rand([3, 0]), 0))
  })

  it('Tile: ranks 1–4, random reps (0 included), float32/int32/bool, views', () => {
    for (const dtype of ['float32', 'int32', 'bool'] as const) {
      for (let rank = 1; rank <= 4; rank++) {
        for (let k = 0; k < 4; k++) {
          const x = randOf(dtype, randShape(rank, rank <= 2 ? 40 : 4))
          const reps = x.shape.map(() => 1 + draws.rng.int(3))
          expectSame('Tile', () => tf.tile(x, reps))
        }
      }
    }
    expectSame('Tile', () => tf.tile(randBool([64, 1]), [1, 128])) // the span fine-tuning mask
    expectSame('Tile', () => tf.tile(rand([3, 2]), [0, 2]))
    expectSame('Tile', () => tf.tile(rand([1]), [1000]))
    expectSame('Tile', () => tf.tile(viewOf(rand([6, 5]), [2, 0], [3, 5]), [2, 3]))
  })

  it('OneHot: float32 and int32 (stored as Int32Array), on/off values, out-of-range and negative indices, empty', () => {
    const idx = tf.tensor1d([0, 3, -1, 6, 7, 2, 100, -7, 5], 'int32')
    expectSame('OneHot', () => tf.oneHot(idx, 7))
    expectSame('OneHot', () => tf.oneHot(idx, 7, 5, -2, 'float32'))
    expectSame('OneHot', () => tf.oneHot(idx, 3, 1, 0, 'float32'))
    expectSame('OneHot', () => tf.oneHot(randInt([4, 5], -3, 12), 9, 2, 1))
    expectSame('OneHot', () => tf.oneHot(randInt([2, 3, 4], 0, 6), 5, 1, 0, 'float32'))
    expectSame('OneHot', () => tf.oneHot(tf.tensor1d([], 'int32'), 4))
    const [asInt] = expectSame('OneHot', () => tf.oneHot(idx, 7, 3, 0, 'int32'))
    expect(storage(asInt)).toBeInstanceOf(Int32Array) // tfjs' kernel stores a Float32Array
    const [asFloat] = expectSame('OneHot', () => tf.oneHot(idx, 7, 0.5, 0.25, 'float32'))
    expect(storage(asFloat)).toBeInstanceOf(Float32Array)
    expectSame('OneHot', () => tf.oneHot(idx, 7, 1, 0, 'bool'), false) // left to tfjs
    tf.dispose([asInt, asFloat])
  })

  it('complex64, and storage not of its dtype (tfjs\' int32 OneHot), are left to tfjs', () => {
    const c = tf.complex(rand([2, 3]), rand([2, 3]))
    expectSame('Concat', () => tf.concat([c, c], 1), false)
    const hot = withTfjs(() => tf.oneHot(tf.tensor1d([1, 0, 2], 'int32'), 3))
    expect(hot.dtype).toBe('int32')
    expect(storage(hot)).toBeInstanceOf(Float32Array)
    expectSame('Slice', () => tf.slice(hot, [0, 1], [3, 2]), false)
    expectSame('Tile', () => tf.tile(hot, [1, 2]), false)
  })

  it('gradients through concat, slice, pad, stack, unstack and tile agree', () => {
    const a = rand([4, 7, 3])
    const b = rand([4, 2, 3])
    const w = rand([4, 9, 3])
    expectCloseGrads(() => tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.concat([x, y], 1).mul(w).sum())([a, b]))
    expectCloseGrads(() => tf.grads((x: tf.Tensor) => tf.slice(x, [1, 2, 0], [2, 4, 2]).square().sum())([a]))
    expectCloseGrads(() => tf.grads((x: tf.Tensor) => tf.pad(x, [[1, 0], [0, 2], [1, 1]], 0.5).square().sum())([a]))
    expectCloseGrads(() => tf.grads((x: tf.Tensor, y: tf.Tensor) => tf.stack([x, y], 1).square().sum())([b, rand([4, 2, 3])]))
    expectCloseGrads(() => tf.grads((x: tf.Tensor) => tf.addN(tf.unstack(x, 1).map((t, i) => t.mul(i + 1))).square().sum())([a]))
    expectCloseGrads(() => tf.grads((x: tf.Tensor) => tf.tile(x, [2, 1, 3]).square().sum())([b]))
    // span fine-tuning's im2col: pad, shifted slices, concat (conv1dSame)
    const conv = (x: tf.Tensor) => {
      const p = tf.pad(x, [[0, 0], [1, 1], [0, 0]])
      return tf.concat([0, 1, 2].map((j) => p.slice([0, j, 0], [4, 7, 3])), 2).square().sum()
    }
    expectCloseGrads(() => tf.grads(conv)([a]))
  })
})

describe('copyBox', () => {
  it('copies a box between any strides: merged runs, short runs, single elements', () => {
    const src = Float32Array.from({length: 4 * 5 * 6}, (_, i) => i)
    // x[1:3, :, 2:5] of [4, 5, 6] into a [2, 5, 3] row-major box
    const dst = new Float32Array(30)
    copyBox(src, 1 * 30 + 2, [30, 6, 1], dst, 0, [15, 3, 1], [2, 5, 3])
    const want: number[] = []
    for (let i = 1; i < 3; i++) for (let j = 0; j < 5; j++) for (let k = 2; k < 5; k++) want.push(i * 30 + j * 6 + k)
    expect(Array.from(dst)).toEqual(want)
    // a transposed walk (dst strides not row-major) and a long contiguous run
    const t = new Float32Array(6 * 5)
    copyBox(src, 0, [6, 1], t, 0, [1, 5], [5, 6])
    for (let j = 0; j < 5; j++) for (let k = 0; k < 6; k++) expect(t[k * 5 + j]).toBe(j * 6 + k)
    const whole = new Float32Array(120)
    copyBox(src, 0, [30, 6, 1], whole, 0, [30, 6, 1], [4, 5, 6])
    expect(Array.from(whole)).toEqual(Array.from(src))
    const one = new Int32Array(1)
    copyBox(Int32Array.of(5, 6, 7), 2, [1, 1], one, 0, [1, 1], [1, 1])
    expect(one[0]).toBe(7)
    copyBox(src, 0, [1], whole, 0, [1], [0]) // nothing
  })
})
