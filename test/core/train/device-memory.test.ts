import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {DevicePeak} from '../../../src/core/train/device-memory.js'
import {buildStandins} from '../../helpers/cuda-standins.js'

// DevicePeak (src/core/train/device-memory.ts): the metrics record's peak_device_bytes is the most
// the cuda caching allocator handed out at once during the window's steps, not since the process
// started, and is absent off cuda.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

describe('DevicePeak off cuda', () => {
  it('gives no field on the cpu backend', async () => {
    await initBackend('cpu')
    const p = new DevicePeak()
    p.start()
    p.end()
    expect(p.field()).toEqual({})
  })
})

describe.skipIf(skip)('DevicePeak on the cuda stand-in device', () => {
  beforeAll(async () => {
    process.env.SPAN_CUDA_LIBS = (standins as {dir: string}).dir
    await initBackend('cuda')
  })
  afterAll(async () => {
    await initBackend('cpu')
  })

  it("a step's transient tensor counts in its window, and a later window starts from what is live", () => {
    const p = new DevicePeak()
    const big = () =>
      tf.tidy(() =>
        tf
          .zeros([1 << 20])
          .add(1)
          .sum(),
      ) // 4 MiB transients, freed at once
    p.start()
    tf.dispose(big())
    p.end()
    const first = p.field().peak_device_bytes!
    expect(first).toBeGreaterThanOrEqual(2 * 4 * (1 << 20)) // zeros and add's output live together
    p.start()
    tf.dispose(tf.tidy(() => tf.zeros([1000]).add(1)))
    p.end()
    const second = p.field().peak_device_bytes!
    expect(second).toBeGreaterThan(0)
    expect(second).toBeLessThan(first - 4 * (1 << 20)) // without the reset it would repeat the first window's peak
  })
})
