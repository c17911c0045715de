import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {adamwFused, dropoutFused} from '../../../src/core/engine/fused.js'
import {nativeActive} from '../../../src/core/engine/native-ops.js'
import {loadNative, setNativeKernelsEnabled, startNative} from '../../../src/core/engine/native.js'
import {AdamW} from '../../../src/core/train/optim.js'

// The fused native helpers: dropout's mask and the one-pass AdamW update.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

describe.skipIf(!status.available)(`native dropout and AdamW${reason}`, () => {
  beforeAll(async () => {
    expect(await startNative()).toBeNull()
    expect(nativeActive()).toBe(true)
  })

  it('dropout keeps 1−rate of the entries, scaled by 1/(1−rate), reproducibly per seed', () => {
    const x = tf.ones([300, 101])
    const y = dropoutFused(x, 0.1, 42)
    const vals = y.dataSync()
    const kept = vals.filter((v) => v !== 0)
    expect(kept.every((v) => Math.abs(v - 1 / 0.9) < 1e-6)).toBe(true)
    expect(Math.abs(kept.length / vals.length - 0.9)).toBeLessThan(0.01) // 30,300 draws: σ ≈ 0.0017
    expect(Array.from(dropoutFused(x, 0.1, 42).dataSync())).toEqual(Array.from(vals))
    expect(Array.from(dropoutFused(x, 0.1, 43).dataSync())).not.toEqual(Array.from(vals))
  })

  it('dropout passes the gradient through the same mask', () => {
    const x = tf.randomNormal([17, 33], 0, 1, 'float32', 3)
    const y = dropoutFused(x, 0.25, 7)
    const g = tf.grad((t: tf.Tensor) => dropoutFused(t, 0.25, 7).sum())(x)
    const yv = y.dataSync()
    const xv = x.dataSync()
    const gv = g.dataSync()
    for (let i = 0; i < yv.length; i++) expect(gv[i] * xv[i]).toBeCloseTo(yv[i], 5)
  })

  it('AdamW in one pass matches the optimiser of src/core/train/optim.ts over three steps, clipping factor included', () => {
    const shape = [37, 13]
    const init = tf.randomNormal(shape, 0, 0.02, 'float32', 1)
    const grads = [2, 3, 4].map((s) => tf.randomNormal(shape, 0, 1, 'float32', s))
    const ref = tf.variable(init.clone())
    const opt = new AdamW()
    const p = tf.variable(init.clone())
    const m = tf.variable(tf.zerosLike(init))
    const v = tf.variable(tf.zerosLike(init))
    const {beta1, beta2, eps, weightDecay} = opt.opts
    grads.forEach((g, i) => {
      const lr = 1e-3 * (i + 1)
      const gradScale = [1, 0.5, 0.25][i]
      setNativeKernelsEnabled(false) // the reference: the composite formula on tfjs' own kernels
      opt.apply([['x.weight', ref]], new Map([['x.weight', g]]), lr, gradScale)
      setNativeKernelsEnabled(true)
      const t = i + 1
      adamwFused(p, m, v, g, {lr, beta1, beta2, eps, weightDecay, bc1: 1 - beta1 ** t, bc2: 1 - beta2 ** t, gradScale})
    })
    const a = p.dataSync()
    const b = ref.dataSync()
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-6)
    const mr = opt.m.get('x.weight')!.dataSync()
    m.dataSync().forEach((x, i) => expect(Math.abs(x - mr[i])).toBeLessThan(1e-6))
    tf.dispose([init, ...grads, ref, p, m, v])
    opt.dispose()
  })

  it('AdamW updates in place only storage nobody else can see', () => {
    const h = {lr: 0.1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, bc1: 0.1, bc2: 0.001, gradScale: 1}
    const p = tf.variable(tf.ones([64]))
    const m = tf.variable(tf.zeros([64]))
    const v = tf.variable(tf.zeros([64]))
    const g = tf.ones([64])
    const storage = (t: tf.Tensor) => (tf.backend() as unknown as {data: {get(id: tf.DataId): {values: Float32Array}}}).data.get(t.dataId).values
    adamwFused(p, m, v, g, h) // p, m, v now in buffers of the addon's pool
    const own = storage(p)
    adamwFused(p, m, v, g, h)
    expect(storage(p)).toBe(own) // updated in place
    const seen = p.dataSync() // handed out: must not change under the reader's feet
    const before = Array.from(seen)
    const alias = p.reshape([8, 8]) // a second tensor on the same storage
    adamwFused(p, m, v, g, h)
    expect(Array.from(seen)).toEqual(before)
    expect(Array.from(alias.dataSync())).toEqual(before)
    expect(p.dataSync()[0]).toBeLessThan(before[0])
    tf.dispose([p, m, v, g, alias])
  })

  it('runs the composite kernels off the native backend', async () => {
    await tf.setBackend('wasm').catch(() => false)
    if (tf.getBackend() === 'cpu') return // wasm not available in this process: nothing to check
    expect(nativeActive()).toBe(false)
    const x = tf.ones([4, 4])
    expect(dropoutFused(x, 0.5, 1).shape).toEqual([4, 4])
    const p = tf.variable(tf.ones([2]))
    adamwFused(p, tf.variable(tf.zeros([2])), tf.variable(tf.zeros([2])), tf.ones([2]), {lr: 1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, bc1: 0.1, bc2: 0.001, gradScale: 1})
    for (const x of p.dataSync()) expect(Math.abs(x)).toBeLessThan(1e-6) // the composite's step: 1 − 1·(0.1/0.1)/(√1 + ε)
    await tf.setBackend('cpu')
  })
})
