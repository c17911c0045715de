import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {adamwFast, dropoutFast, nativeActive} from '../../../src/core/engine/native-ops.js'
import {loadNative, startNative} from '../../../src/core/engine/native.js'
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
    const y = dropoutFast(x, 0.1, 42)
    const vals = y.dataSync()
    const kept = vals.filter((v) => v !== 0)
    expect(kept.every((v) => Math.abs(v - 1 / 0.9) < 1e-6)).toBe(true)
    expect(Math.abs(kept.length / vals.length - 0.9)).toBeLessThan(0.01) // 30,300 draws: σ ≈ 0.0017
    expect(Array.from(dropoutFast(x, 0.1, 42).dataSync())).toEqual(Array.from(vals))
    expect(Array.from(dropoutFast(x, 0.1, 43).dataSync())).not.toEqual(Array.from(vals))
  })

  it('dropout passes the gradient through the same mask', () => {
    const x = tf.randomNormal([17, 33], 0, 1, 'float32', 3)
    const y = dropoutFast(x, 0.25, 7)
    const g = tf.grad((t: tf.Tensor) => dropoutFast(t, 0.25, 7).sum())(x)
    const yv = y.dataSync()
    const xv = x.dataSync()
    const gv = g.dataSync()
    for (let i = 0; i < yv.length; i++) expect(gv[i] * xv[i]).toBeCloseTo(yv[i], 5)
  })

  it('AdamW in one pass matches the optimiser of src/core/train/optim.ts over three steps', () => {
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
      opt.apply([['x.weight', ref]], new Map([['x.weight', g]]), lr)
      const t = i + 1
      expect(adamwFast(p, m, v, g, {lr, beta1, beta2, eps, weightDecay, bc1: 1 - beta1 ** t, bc2: 1 - beta2 ** t})).toBe(true)
    })
    const a = p.dataSync()
    const b = ref.dataSync()
    for (let i = 0; i < a.length; i++) expect(Math.abs(a[i] - b[i])).toBeLessThan(1e-6)
    const mr = opt.m.get('x.weight')!.dataSync()
    m.dataSync().forEach((x, i) => expect(Math.abs(x - mr[i])).toBeLessThan(1e-6))
  })

  it('falls back to tfjs ops off the native backend', async () => {
    await tf.setBackend('wasm').catch(() => false)
    if (tf.getBackend() === 'cpu') return // wasm not available in this process: nothing to check
    expect(nativeActive()).toBe(false)
    const x = tf.ones([4, 4])
    expect(dropoutFast(x, 0.5, 1).shape).toEqual([4, 4])
    const p = tf.variable(tf.ones([2]))
    expect(adamwFast(p, tf.variable(tf.zeros([2])), tf.variable(tf.zeros([2])), tf.ones([2]), {lr: 1, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0, bc1: 0.1, bc2: 0.001})).toBe(false)
    expect(Array.from(p.dataSync())).toEqual([1, 1])
    await tf.setBackend('cpu')
  })
})
