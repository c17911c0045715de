import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, readFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {SpanBertForPreTraining, pretrainingTerms} from '../../../src/core/model/pretraining.js'
import {STATE_FORMAT, saveTrainingCheckpoint, type TrainerState} from '../../../src/core/train/checkpointing.js'
import {resolveConfig} from '../../../src/core/train/config.js'
import {ExampleMaker} from '../../../src/core/train/examples.js'
import {pretrain} from '../../../src/core/train/loop.js'
import {evalBatch} from '../../../src/core/train/objective.js'
import {AdamW} from '../../../src/core/train/optim.js'
import {lineProgress} from '../../../src/core/train/progress.js'
import {STREAM} from '../../../src/core/train/sampler.js'
import {prepareData, freshModelConfig} from '../../../src/core/train/setup.js'
import {example, smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, writeBlocks} from './helpers.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-loop-'))
const train = join(tmp, 'train.ndjson')
const dev = join(tmp, 'dev.ndjson')
const tinyFlags = {preset: 'tiny', layers: 1, hidden: 16, heads: 2, 'batch-size': 2, backend: 'wasm', seed: 5, lr: 1e-3}

beforeAll(async () => {
  await initBackend('wasm')
  writeBlocks(train, 40, 1)
  writeBlocks(dev, 3, 2)
})

describe('the training loop', () => {
  it('leaves no tensors behind: the same count after step 10 and step 100 (dynamic masking, eval, checkpoint)', async () => {
    const config = resolveConfig([{name: 'test', values: {...tinyFlags, input: train, eval: dev, 'max-steps': 100, 'eval-every': 30, 'save-every': 50, 'log-every': 25}}])
    const counts = new Map<number, number>()
    const out = memoryWriter()
    await pretrain({config, out: join(tmp, 'leak'), resume: null, stopAt: null}, {
      out: out.writer, log: () => {}, progress: lineProgress(() => {}, 1e9),
      onStep: (step) => counts.set(step, tf.memory().numTensors),
    })
    await out.writer.end()
    expect(counts.get(100)).toBe(counts.get(10))
    const recs = out.records()
    expect(recs.filter((r) => r.split === 'eval').map((r) => r.step)).toEqual([30, 60, 90, 100])
    expect(recs.filter((r) => r.checkpoint).map((r) => r.step)).toEqual([50, 100])
    const steps = recs.filter((r) => r.split === undefined && r.loss !== undefined)
    expect(steps.map((r) => r.step)).toEqual([25, 50, 75, 100])
    expect(steps[3].loss as number).toBeLessThan(steps[0].loss as number)
  })
})

describe('pretrainingTerms', () => {
  it('gives the model\'s own loss (SpanBertForPreTraining.losses), with accuracies in [0, 1]', () => {
    const model = SpanBertForPreTraining.init(smallConfig(), 3)
    const b = toTensors(collate([example(12, 2, 5, new Rng(1)), example(10, 3, 4, new Rng(2))], {padId: 0, maxTargets: 4, maxPositions: 32}))
    const ours = evalBatch(model, b, EVAL)
    const theirs = tf.tidy(() => model.losses(b, EVAL).total.dataSync()[0])
    expect(ours.total).toBeCloseTo(theirs, 5)
    expect(ours.stats[2]).toBe(b.nMlm)
    expect(ours.stats[5]).toBe(b.nSbo)
    expect(ours.stats[1]).toBeGreaterThanOrEqual(0)
    expect(ours.stats[1]).toBeLessThanOrEqual(b.nMlm)
    const before = tf.memory().numTensors
    tf.tidy(() => {
      pretrainingTerms(model.forward(b, EVAL), b)
    })
    expect(tf.memory().numTensors).toBe(before)
    disposeBatch(b)
    model.dispose()
  })
})

describe('dynamic masking', () => {
  it('masks a block the same way for the same (epoch, index), differently in another epoch', async () => {
    const config = resolveConfig([{name: 'test', values: {...tinyFlags, input: train}}])
    const data = await prepareData(config, (v) => freshModelConfig(config, v.tokens.length, v.special.pad), null)
    const maker = () => new ExampleMaker(data.rules, data.maskerFor('blocks'), 9, STREAM.mask, data.index.name)
    const rec = data.index.read(4)
    const a = maker().make(rec, 4, 0)
    expect(maker().make(rec, 4, 0)).toEqual(a)
    const later = [1, 2, 3].map((e) => maker().make(rec, 4, e).targets.map(([p]) => p).join(','))
    expect(later.some((t) => t !== a.targets.map(([p]) => p).join(','))).toBe(true)
    expect(a.targets.length).toBe(Math.ceil(0.15 * (rec.value.ids as number[]).length - 0.3)) // ceil(0.15·n), n without [CLS]/[SEP]
    await data.index.close()
  })
})

describe('saving a checkpoint on a full disk', () => {
  it('fails with one line naming the step, and leaves the previous checkpoint as it was', async () => {
    const dir = join(tmp, 'full-disk')
    const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), 1)
    const opt = new AdamW()
    const config = resolveConfig([{name: 'test', values: {input: train}}])
    const state = (step: number): TrainerState => ({format: STATE_FORMAT, step, sampler: {epoch: 0, cursor: step}, dropout_rng: [1, 2, 3, 4],
      data: {bytes: 1, records: 1, sha256: 'x'}, config})
    await saveTrainingCheckpoint(dir, model, opt, fixtureVocab.info.path, state(10))
    const before = new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]))
    model.params.set('bert.pooler.dense.bias', tf.ones([16])) // the model moved on
    let writes = 0
    const enospc = (f: {name: string; write(p: string): Promise<void>}) => ({name: f.name, write: async (p: string) => {
      if (++writes === 3) throw Object.assign(new Error('ENOSPC: no space left on device, write'), {code: 'ENOSPC'})
      await f.write(p)
    }})
    const err = await saveTrainingCheckpoint(dir, model, opt, fixtureVocab.info.path, state(20), enospc).catch((e: Error) => e)
    expect((err as Error).message).toBe(`${dir}: could not save the checkpoint of step 20: ${join(dir, 'vocab.txt')}: no space left on device (ENOSPC); any previous checkpoint there is unchanged`) // the file that did not fit
    expect(readdirSync(dir).sort()).toEqual([...before.keys()].sort()) // no temporary files left
    for (const [f, bytes] of before) expect(readFileSync(join(dir, f)).equals(bytes)).toBe(true)
    expect(JSON.parse(readFileSync(join(dir, 'trainer_state.json'), 'utf8')).step).toBe(10)
    expect(existsSync(join(dir, 'train_config.json'))).toBe(true)
    opt.dispose()
    model.dispose()
  })
})
