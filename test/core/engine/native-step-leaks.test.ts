import * as tf from '@tensorflow/tfjs'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {fusedCounts} from '../../../src/core/engine/fused.js'
import {loadNative, nativePoolStats, startNative} from '../../../src/core/engine/native.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {AdamW} from '../../../src/core/train/optim.js'
import {trainStep} from '../../../src/core/train/step.js'
import {example, smallConfig} from '../model/helpers.js'

// Training steps on native with dropout on, through the kernels issue 32 added (flash attention,
// native/src/flash.cc; the residual LayerNorm, native/src/residual.cc): no tensor and no byte is
// left behind step after step, and once warm each step makes the same few new buffers (the pool
// hands back what the last step freed), so memory does not grow.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

describe.skipIf(!status.available)(`native training steps leak nothing${reason}`, () => {
  it('tensors and pool buffers stay level over steps, with dropout', async () => {
    expect(await startNative()).toBeNull()
    const config = smallConfig({hidden_size: 32, intermediate_size: 64, num_attention_heads: 4, vocab_size: 97, max_position_embeddings: 80})
    const model = SpanBertForPreTraining.init(config, 5)
    const rng = new Rng(9)
    const batch = toTensors(collate([example(70, 3, 6, rng, 97), example(66, 2, 2, rng, 97)], {padId: 0, maxTargets: 4, maxPositions: 80}))
    const opt = new AdamW()
    const step = () => trainStep(model, opt, batch, 1e-3, {training: true, rng})
    const runs = fusedCounts()
    for (let i = 0; i < 2; i++) step() // warm-up: optimiser state made, the pool filled
    const [tensors, bytes] = [tf.memory().numTensors, tf.memory().numBytes]
    const fresh: number[] = [] // new pool buffers per step
    for (let i = 0; i < 3; i++) {
      const pool = nativePoolStats().allocated
      expect(Number.isFinite(step().loss)).toBe(true)
      fresh.push(nativePoolStats().allocated - pool)
    }
    expect(tf.memory().numTensors).toBe(tensors)
    expect(tf.memory().numBytes).toBe(bytes)
    expect(new Set(fresh).size, `new pool buffers per step ${fresh}: the same each step, not growing`).toBe(1)
    expect(fresh[0]).toBeLessThan(32) // a step makes hundreds of buffers: all but the few read out (pinned, native-pool.ts) come from the pool
    const now = fusedCounts()
    for (const op of ['attention', 'residualLayerNorm', 'dropout']) expect(now[op] - runs[op], op).toBeGreaterThan(0)
    disposeBatch(batch)
    model.dispose()
  })
})
