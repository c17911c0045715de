import * as tf from '@tensorflow/tfjs'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {fusedCounts} from '../../../src/core/engine/fused.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {loadNative, nativeKernelCounts, startNative} from '../../../src/core/engine/native.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {lossAndGrads} from '../../../src/core/train/step.js'
import {example, smallConfig} from '../model/helpers.js'

// A whole training step (forward, backward) on the native backend against wasm: same model,
// same batch. Dropout is off: on native its masks come from the addon's own generator
// (native-ops.test.ts checks them), so they cannot equal tf.dropout's.
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`

/** Loss parts and gradients of one step on a backend, as plain arrays. */
async function step(start: () => Promise<unknown>): Promise<{parts: number[]; grads: Map<string, Float32Array>}> {
  await start()
  const config = smallConfig({hidden_size: 32, intermediate_size: 64, num_attention_heads: 4, vocab_size: 97, hidden_dropout_prob: 0, attention_probs_dropout_prob: 0})
  const model = SpanBertForPreTraining.init(config, 5)
  const rng = new Rng(9)
  const examples = [example(20, 3, 6, rng, 97), example(17, 2, 2, rng, 97), example(24, 10, 14, rng, 97)]
  const batch = toTensors(collate(examples, {padId: 0, maxTargets: 4, maxPositions: 32}))
  const {parts, grads} = lossAndGrads(model, batch, {training: true, rng: new Rng(11)})
  const out = new Map([...grads].map(([k, g]) => [k, g.dataSync() as Float32Array]))
  tf.dispose([...grads.values()])
  disposeBatch(batch)
  model.dispose()
  return {parts, grads: out}
}

const norm = (x: Float32Array): number => Math.sqrt(x.reduce((s, v) => s + v * v, 0))

describe.skipIf(!status.available)(`a training step on the native backend agrees with wasm${reason}`, () => {
  it('loss and every gradient within 1e-4 relative', async () => {
    const wasm = await step(() => initBackend('wasm'))
    const native = await step(() => startNative())
    expect(tf.getBackend()).toBe('cpu')
    const fused = fusedCounts() // every fused op took part
    for (const op of ['linear', 'layerNorm', 'crossEntropy', 'attention', 'residualLayerNorm']) expect(fused[op], op).toBeGreaterThan(0)
    expect(nativeKernelCounts().GatherV2.native).toBeGreaterThan(0)
    for (let i = 0; i < 2; i++) expect(Math.abs(native.parts[i] - wasm.parts[i])).toBeLessThan(1e-4 * Math.abs(wasm.parts[i]))
    expect([...native.grads.keys()].sort()).toEqual([...wasm.grads.keys()].sort())
    for (const [name, g] of wasm.grads) {
      const n = native.grads.get(name)!
      const diff = norm(n.map((v, i) => v - g[i]))
      expect(diff, name).toBeLessThanOrEqual(1e-4 * norm(g) + 1e-9)
    }
  })
})
