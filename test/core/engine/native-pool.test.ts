import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {loadNative, nativePoolStats, startNative} from '../../../src/core/engine/native.js'
import {sizeClass} from '../../../src/core/engine/native-pool.js'

// The native kernels' buffer pool (src/core/engine/native-pool.ts): size classes, reuse across
// nearby lengths, and never recycling storage that something else can still see.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

/** The array a cpu-backend tensor is stored in. */
const storage = (t: tf.Tensor): Float32Array => (tf.backend() as unknown as {data: {get(id: tf.DataId): {values: Float32Array}}}).data.get(t.dataId).values

describe('sizeClass', () => {
  it('rounds up to 4, 5, 6 or 7 times a power of two: at most a quarter spare, idempotent', () => {
    expect([0, 1, 5, 7].map(sizeClass)).toEqual([0, 1, 5, 7]) // below 8: exact
    expect([8, 9, 10, 11, 12, 13, 14, 15, 16, 17].map(sizeClass)).toEqual([8, 10, 10, 12, 12, 14, 14, 16, 16, 20])
    expect(sizeClass(1000)).toBe(1024)
    expect(sizeClass(1025)).toBe(1280)
    for (let n = 8; n < 100_000; n += 37) {
      const c = sizeClass(n)
      expect(c).toBeGreaterThanOrEqual(n)
      expect(c / n).toBeLessThanOrEqual(1.25)
      expect(sizeClass(c)).toBe(c)
    }
  })
})

describe.skipIf(!status.available)(`the native buffer pool${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
  })

  it('a disposed output is reused by the next kernel whose length falls in its class, as a prefix view', () => {
    const [a, b] = [tf.ones([1000]), tf.ones([1000])]
    const y = tf.add(a, b) // 1000 → class 1024
    const buf = storage(y).buffer
    expect(storage(y).length).toBe(1000)
    y.dispose()
    const before = nativePoolStats().reused
    const [c, d] = [tf.ones([990]), tf.ones([990])]
    const z = tf.mul(c, d) // 990 → class 1024: the same buffer
    expect(storage(z).buffer).toBe(buf)
    expect(storage(z).length).toBe(990)
    expect(nativePoolStats().reused).toBe(before + 1)
    expect(Array.from(z.dataSync().slice(0, 3))).toEqual([1, 1, 1])
    tf.dispose([a, b, c, d, z])
  })

  it('storage handed out by dataSync is never recycled: a later kernel cannot overwrite what the reader holds', () => {
    const x = tf.fill([2000], 3)
    const y = tf.add(x, x)
    const held = y.dataSync() // pins y's buffer
    y.dispose()
    const z = tf.mul(x, x) // same class: must get another buffer
    expect(storage(z).buffer).not.toBe(held.buffer)
    expect(held[0]).toBe(6)
    tf.dispose([x, z])
  })

  it('storage registered a second time, or through another view, is never recycled', () => {
    const x = tf.fill([3000], 2)
    const y = tf.add(x, x)
    const view = tf.tensor(storage(y).subarray(10, 20)) // a second registration of part of the buffer
    const buf = storage(y).buffer
    y.dispose()
    const z = tf.mul(x, x)
    expect(storage(z).buffer).not.toBe(buf)
    expect(Array.from(view.dataSync())).toEqual(new Array(10).fill(4))
    tf.dispose([x, z, view])
  })
})
