import * as tf from '@tensorflow/tfjs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {parseObjectives, presetConfig} from '../../../src/core/model/config.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {lossAndGrads} from '../../../src/core/train/step.js'
import {example, smallConfig, tidyValues} from './helpers.js'

beforeAll(async () => {
  await initBackend('cpu')
})

function batchOf(seed: number, nsp = false) {
  const rng = new Rng(seed)
  const exs = [example(10, 2, 4, rng), example(14, 5, 9, rng), example(7, 1, 2, rng)]
  if (nsp) exs.forEach((e, i) => Object.assign(e, {next: i % 2 === 0}))
  return toTensors(collate(exs, {padId: 0, maxTargets: 4, maxPositions: 32}))
}

describe('config', () => {
  it('builds presets with HF BertConfig keys', () => {
    const c = presetConfig('base', 30522)
    expect(c).toMatchObject({hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072,
      max_position_embeddings: 512, type_vocab_size: 2, layer_norm_eps: 1e-12, initializer_range: 0.02, hidden_act: 'gelu'})
    expect(presetConfig('large', 100).intermediate_size).toBe(4096)
    expect(() => presetConfig('tiny', 100, {num_attention_heads: 3})).toThrow(/multiple/)
    expect(parseObjectives('sbo, mlm')).toEqual(['mlm', 'sbo'])
    expect(() => parseObjectives('sbo')).toThrow(/mlm/)
  })
})

describe('SpanBertForPreTraining', () => {
  it('gives logits of the right shapes and a loss near 2·ln V at init (mlm,sbo)', () => {
    const model = SpanBertForPreTraining.init(smallConfig(), 1)
    const b = batchOf(1)
    const before = tf.memory().numTensors
    const [shapes, losses] = tidyValues(() => {
      const out = model.forward(b, EVAL)
      const l = model.losses(b, EVAL)
      return [[out.mlmLogits.shape, out.sboLogits?.shape, out.nspLogits], [l.total.dataSync()[0], l.mlm.dataSync()[0], l.sbo?.dataSync()[0]]] as const
    })
    expect(tf.memory().numTensors).toBe(before)
    expect(shapes).toEqual([[3 + 5 + 2, 40], [3 + 4, 40], null])
    expect(losses[1]).toBeCloseTo(Math.log(40), 0)
    expect(losses[0]).toBeCloseTo((losses[1] as number) + (losses[2] as number), 5)
    disposeBatch(b)
    model.dispose()
  })

  it('works with mlm alone and with mlm,nsp (pooler + seq_relationship)', () => {
    const mlmOnly = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm']}), 2)
    const nsp = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm', 'nsp']}), 2)
    expect(mlmOnly.params.names().some((n) => n.startsWith('cls.pair_target'))).toBe(false)
    expect(nsp.params.has('cls.seq_relationship.weight')).toBe(true)
    const b = batchOf(2, true)
    const r = tidyValues(() => {
      const a = mlmOnly.losses(b, EVAL)
      const n = nsp.losses(b, EVAL)
      return {aSbo: a.sbo === null ? null : 'present', aTotal: a.total.dataSync()[0], aMlm: a.mlm.dataSync()[0], nsp: n.nsp?.dataSync()[0], total: n.total.dataSync()[0], mlm: n.mlm.dataSync()[0]}
    })
    expect(r.aSbo).toBeNull()
    expect(r.aTotal).toBe(r.aMlm)
    expect(r.nsp).toBeCloseTo(Math.log(2), 1)
    expect(r.total).toBeCloseTo(r.mlm + (r.nsp as number), 5)
    const noNext = batchOf(2)
    expect(() => tf.tidy(() => nsp.losses(noNext, EVAL).total)).toThrow(/next/)
    ;[b, noNext].forEach(disposeBatch)
    mlmOnly.dispose()
    nsp.dispose()
  })

  it('ignores padding: an example scores the same alone and batched with longer ones', () => {
    const model = SpanBertForPreTraining.init(smallConfig(), 3)
    const rng = new Rng(9)
    const short = example(7, 2, 3, rng)
    const long = example(20, 4, 8, rng)
    const alone = toTensors(collate([short], {padId: 0, maxTargets: 4, maxPositions: 32}))
    const batched = toTensors(collate([short, long], {padId: 0, maxTargets: 4, maxPositions: 32}))
    const a = tf.tidy(() => Array.from(model.forward(alone, EVAL).mlmLogits.dataSync()))
    const b = tf.tidy(() => Array.from(model.forward(batched, EVAL).mlmLogits.dataSync()).slice(0, a.length))
    b.forEach((x, i) => expect(x).toBeCloseTo(a[i], 4))
    ;[alone, batched].forEach(disposeBatch)
    model.dispose()
  })

  it('dropout is seeded: same generator state, same loss; eval is deterministic and differs', () => {
    const model = SpanBertForPreTraining.init(smallConfig(), 4)
    const b = batchOf(4)
    const run = (seed: number) => tf.tidy(() => model.losses(b, {training: true, rng: new Rng(seed)}).total.dataSync()[0])
    expect(run(5)).toBe(run(5))
    expect(run(5)).not.toBe(run(6))
    disposeBatch(b)
    model.dispose()
  })
})

describe('backends agree (wasm vs cpu, forward + backward)', () => {
  afterAll(async () => {
    await initBackend('cpu')
  })

  async function lossAndGradsOn(backend: 'cpu' | 'wasm') {
    await initBackend(backend)
    const model = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm', 'sbo', 'nsp']}), 7)
    const b = batchOf(7, true)
    const {parts, grads} = lossAndGrads(model, b, {training: true, rng: new Rng(11)})
    const g = new Map([...grads].map(([k, t]) => [k, Array.from(t.dataSync())]))
    tf.dispose([...grads.values()])
    disposeBatch(b)
    const nParams = model.params.names().length
    model.dispose()
    return {parts, g, nParams}
  }

  it('gives the same losses and gradients within float tolerance', async () => {
    const cpu = await lossAndGradsOn('cpu')
    const wasm = await lossAndGradsOn('wasm')
    expect(tf.getBackend()).toBe('wasm')
    wasm.parts.forEach((x, i) => expect(x).toBeCloseTo(cpu.parts[i], 4))
    expect(cpu.g.size).toBe(cpu.nParams) // every parameter, embeddings included, gets a gradient
    let maxErr = 0
    for (const [name, gc] of cpu.g) {
      const gw = wasm.g.get(name) as number[]
      const scale = Math.max(1e-6, ...gc.map(Math.abs))
      gc.forEach((x, i) => (maxErr = Math.max(maxErr, Math.abs(x - gw[i]) / scale)))
    }
    expect(maxErr).toBeLessThan(1e-3)
  })
})
