import * as tf from '@tensorflow/tfjs'
import {afterAll, describe, expect, it} from 'vitest'
import {SpanError} from '../../../src/core/stream/errors.js'
import {embeddingLookup, gatherRows, initBackend} from '../../../src/core/engine/index.js'
import {matMulNN, swapLast} from '../../../src/core/engine/matmul.js'

afterAll(async () => {
  await initBackend('cpu')
})

describe('initBackend', () => {
  it('starts wasm and cpu by name', async () => {
    expect(await initBackend('wasm')).toEqual({name: 'wasm', tfName: 'wasm'})
    expect(tf.getBackend()).toBe('wasm')
    expect(await initBackend('cpu')).toEqual({name: 'cpu', tfName: 'cpu'})
  })

  it('auto falls through to the first backend that starts', async () => {
    const info = await initBackend('auto')
    // tfjs-node cannot be installed here; where it is, auto must pick it; else native where the addon built
    expect(['tensorflow-gpu', 'tensorflow', 'native', 'wasm']).toContain(info.name)
    expect(tf.getBackend()).toBe(info.tfName)
  })

  it('an explicit backend that is missing is a SpanError', async () => {
    let hasNode = true
    try {
      await import('@tensorflow/tfjs-node' as string)
    } catch {
      hasNode = false
    }
    if (hasNode) return
    await expect(initBackend('tensorflow')).rejects.toThrow(SpanError)
    await expect(initBackend('tensorflow')).rejects.toThrow(/--backend tensorflow is not available/)
  })
})

describe.each(['cpu', 'wasm'] as const)('gatherRows on %s', (backend) => {
  it('gathers rows and scatter-adds their gradient, duplicates summed', async () => {
    await initBackend(backend)
    const table = tf.tensor2d([[1, 2], [3, 4], [5, 6]])
    const idx = tf.tensor1d([2, 0, 2, 2], 'int32')
    const w = tf.tensor2d([[1, 1], [10, 10], [100, 100], [1000, 1000]])
    const grad = tf.grad((t) => gatherRows(t as tf.Tensor2D, idx).mul(w).sum())(table)
    expect(Array.from(gatherRows(table, idx).dataSync())).toEqual([5, 6, 1, 2, 5, 6, 5, 6])
    expect(Array.from(grad.dataSync())).toEqual([10, 10, 0, 0, 1101, 1101])
    const looked = embeddingLookup(table, tf.tensor2d([[0, 1], [2, 2]], [2, 2], 'int32'))
    expect(looked.shape).toEqual([2, 2, 2])
    tf.dispose([table, idx, w, grad, looked])
  })
})

describe.each(['cpu', 'wasm'] as const)('matMulNN on %s', (backend) => {
  it('equals tf.matMul in value and gradient, for matrices and batched 4-D operands', async () => {
    await initBackend(backend)
    for (const [sa, sb] of [[[3, 5], [5, 4]], [[2, 3, 4, 5], [2, 3, 5, 6]]]) {
      tf.tidy(() => {
        const a = tf.randomNormal(sa, 0, 1, 'float32', 1)
        const b = tf.randomNormal(sb, 0, 1, 'float32', 2)
        const w = tf.randomNormal([...sa.slice(0, -1), sb[sb.length - 1]], 0, 1, 'float32', 3)
        const loss = (mm: (x: tf.Tensor, y: tf.Tensor) => tf.Tensor) => (x: tf.Tensor, y: tf.Tensor) => mm(x, y).mul(w).sum()
        const ours = tf.grads(loss(matMulNN))([a, b])
        const ref = tf.grads(loss((x, y) => tf.matMul(x, y)))([a, b])
        expect(matMulNN(a, b).shape).toEqual(w.shape)
        const close = (x: tf.Tensor, y: tf.Tensor) => tf.max(tf.abs(x.sub(y))).dataSync()[0]
        expect(close(matMulNN(a, b), tf.matMul(a, b))).toBeLessThan(1e-5)
        expect(close(ours[0], ref[0])).toBeLessThan(1e-5)
        expect(close(ours[1], ref[1])).toBeLessThan(1e-5)
        expect(swapLast(a).shape).toEqual([...sa.slice(0, -2), sa[sa.length - 1], sa[sa.length - 2]])
      })
    }
  })
})
