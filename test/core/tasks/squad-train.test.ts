// The QA model (start/end head, run_squad's loss, loading), window collation, training windows,
// the schedule and lazily batched prediction — tiny shapes, a handful of steps.
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {BertForQuestionAnswering, batchTensors, qaFromTensors} from '../../../src/core/model/qa.js'
import {f32Tensor, type HostTensor} from '../../../src/core/model/safetensors.js'
import {parseSquad, SquadFeaturizer, decodeQuestion} from '../../../src/core/tasks/squad/index.js'
import {collateWindows, predictSquad, windowLogits} from '../../../src/core/tasks/squad/predict.js'
import {buildTrainWindows, squadAdapter, type SquadFinetuneConfig} from '../../../src/core/tasks/squad/train.js'
import {finetune, finetuneSchedule} from '../../../src/core/train/finetune-loop.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter} from '../train/helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const config = smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 64})
const context = 'The old man walked to the river in the morning. He saw a boat and a small house near the water.'
const dataset = parseSquad({version: '1.1', data: [{title: 't', paragraphs: [{context, qas: [
  {id: 'q1', question: 'Where did the man walk?', answers: [{text: 'the river', answer_start: 22}]},
  {id: 'q2', question: 'What did he see?', answers: [{text: 'a boat', answer_start: 55}]},
  {id: 'q3', question: 'When did he walk?', answers: [{text: 'the morning', answer_start: 35}]},
]}]}]}, 'mem.json', {checkOffsets: true})
const windows = {maxLen: 24, docStride: 8, maxQueryLen: 8}

beforeAll(async () => {
  await initBackend('cpu')
})

/** host tensors of a model's parameters */
async function host(params: [string, tf.Variable][]): Promise<Map<string, HostTensor>> {
  const m = new Map<string, HostTensor>()
  for (const [name, v] of params) m.set(name, f32Tensor(v.shape, (await v.data()) as Float32Array))
  return m
}

describe('collateWindows', () => {
  it('pads to the longest window, segment 1 from the passage on, labels when asked', () => {
    const b = collateWindows([{ids: [2, 7, 3, 9, 9, 3], docOffset: 3, start: 3, end: 4}, {ids: [2, 8, 3, 9], docOffset: 3, start: 0, end: 0}], 0, true)
    expect([b.B, b.T]).toEqual([2, 6])
    expect(Array.from(b.ids)).toEqual([2, 7, 3, 9, 9, 3, 2, 8, 3, 9, 0, 0])
    expect(Array.from(b.segments)).toEqual([0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0])
    expect(Array.from(b.mask)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0])
    expect(Array.from(b.starts ?? [])).toEqual([3, 0])
    expect(collateWindows([{ids: [1], docOffset: 1, start: 0, end: 0}], 0, false).starts).toBeNull()
  })
})

describe('BertForQuestionAnswering', () => {
  it('loss is the mean of the start and end cross-entropies; padding scores are pushed down', () => {
    const model = BertForQuestionAnswering.init(config, 1)
    const b = collateWindows([{ids: [2, 7, 3, 9, 11, 3], docOffset: 3, start: 3, end: 4}, {ids: [2, 8, 3, 10], docOffset: 3, start: 0, end: 0}], 0, true)
    const [loss, start, end] = tf.tidy(() => {
      const l = model.forward(...batchTensors(b), EVAL)
      return [model.loss(b, EVAL).arraySync(), l.start.arraySync(), l.end.arraySync()] as [number, number[][], number[][]]
    })
    const ce = (row: number[], label: number) => Math.log(row.reduce((a, x) => a + Math.exp(x), 0)) - row[label]
    const want = (ce(start[0], 3) + ce(start[1], 0) + ce(end[0], 4) + ce(end[1], 0)) / 4
    expect(loss).toBeCloseTo(want, 4)
    expect(start[1][4]).toBeLessThan(-9000)
    expect(end[1][5]).toBeLessThan(-9000)
    model.dispose()
  })

  it('loads a pre-training checkpoint: QA head initialised, pre-training heads ignored, encoder kept', async () => {
    const pre = SpanBertForPreTraining.init(config, 5)
    const loaded = qaFromTensors(config, await host(pre.params.entries()), 'pre', 1)
    expect(loaded.initialised).toEqual(['qa_outputs.weight', 'qa_outputs.bias'])
    expect(loaded.ignored).toContain('cls.predictions.bias')
    expect(loaded.ignored).toContain('bert.pooler.dense.weight')
    const name = 'bert.encoder.layer.1.output.dense.weight'
    expect(Array.from(loaded.model.params.get(name).dataSync())).toEqual(Array.from(pre.params.get(name).dataSync()))
    expect(Array.from(loaded.model.params.get('qa_outputs.bias').dataSync())).toEqual([0, 0])
    const again = qaFromTensors(config, await host(loaded.model.params.entries()), 'qa', 9)
    expect(again.initialised).toEqual([])
    expect(Array.from(again.model.params.get('qa_outputs.weight').dataSync())).toEqual(Array.from(loaded.model.params.get('qa_outputs.weight').dataSync()))
    const noEncoder = new Map([...(await host(pre.params.entries()))].filter(([k]) => !k.includes('layer.0.')))
    expect(() => qaFromTensors(config, noEncoder, 'broken', 1)).toThrow(/missing encoder parameter/)
    ;[pre, loaded.model, again.model].forEach((m) => m.dispose())
  })
})

describe('training windows', () => {
  it('labels point at the answer tokens, [CLS] where the window lacks them', () => {
    const {windows: ws, skipped} = buildTrainWindows(dataset, '1.1', tok, windows)
    expect(skipped).toBe(0)
    const fz = new SquadFeaturizer(tok, windows)
    const all = dataset.examples.flatMap((ex, i) => fz.features(ex, i, true).features)
    expect(ws).toHaveLength(all.length)
    expect(ws.some((w) => w.start === 0)).toBe(true)
    ws.forEach((w, i) => {
      expect([w.start, w.end, w.docOffset]).toEqual([all[i].start, all[i].end, all[i].docOffset])
      if (w.start > 0) {
        const text = Array.from(w.ids.subarray(w.start, w.end + 1), (id) => fixtureVocab.tokens[id]).join(' ').replaceAll(' ##', '')
        expect(dataset.examples[all[i].exampleIndex].answers[0].text.toLowerCase()).toBe(text)
      }
    })
  })

  it('SQuAD v1.1 training refuses a question without an answer', () => {
    const v2 = parseSquad({version: 'v2.0', data: [{paragraphs: [{context, qas: [{id: 'x', question: 'Who?', answers: [], is_impossible: true}]}]}]}, 'v2.json')
    expect(() => buildTrainWindows(v2, '1.1', tok, windows)).toThrow(/question x has no answer.*--version 2.0/)
    const {windows: ws} = buildTrainWindows(v2, '2.0', tok, windows)
    expect(ws.every((w) => w.start === 0 && w.end === 0)).toBe(true)
  })

  it('the schedule spans epochs × ceil(windows / (batch × accumulate)) steps, warm-up a proportion', () => {
    const c = {lr: 1e-3, 'warmup-proportion': 0.1, epochs: 3, 'batch-size': 4, accumulate: 2} as SquadFinetuneConfig
    const {sched, stepsPerEpoch} = finetuneSchedule(c, 33)
    expect(stepsPerEpoch).toBe(5)
    expect([sched.total, sched.warmup]).toEqual([15, 1])
    expect(sched.at(1)).toBeCloseTo(1e-3)
    expect(sched.at(15)).toBe(0)
  })
})

describe('predictSquad', () => {
  it('batches lazily without changing a prediction: any batch size, the same as decoding each question alone', async () => {
    const model = BertForQuestionAnswering.init(config, 2)
    const decode = {nBest: 5, maxAnswerLen: 6, v2: false, nullThreshold: 0}
    const one = await predictSquad(model, tok, dataset.examples, {windows, decode, batchSize: 1})
    const many = await predictSquad(model, tok, dataset.examples, {windows, decode, batchSize: 7})
    expect(one.map((p) => p.qid)).toEqual(['q1', 'q2', 'q3'])
    const fz = new SquadFeaturizer(tok, windows)
    for (const [i, ex] of dataset.examples.entries()) {
      const fs = fz.features(ex, i, false).features
      const alone = decodeQuestion(ex.id, fz.doc(ex.context), fs, await windowLogits(model, fs, 0), (t) => tok.basic(t), decode)
      expect(many[i].text).toBe(alone.text)
      expect(one[i].nbest.map((e) => e.text)).toEqual(alone.nbest.map((e) => e.text))
      for (const [k, e] of one[i].nbest.entries()) expect(e.probability).toBeCloseTo(many[i].nbest[k].probability, 5)
    }
    model.dispose()
  })
})

describe('finetuneSquad', () => {
  it('two epochs with accumulation and dev scoring leave no tensors behind and change the weights', async () => {
    const model = BertForQuestionAnswering.init(config, 3)
    const before = Array.from(model.params.get('qa_outputs.weight').dataSync())
    const out = join(mkdtempSync(join(tmpdir(), 'span-squad-train-')), 'ckpt')
    const c: SquadFinetuneConfig = {
      task: 'squad', init: 'test', train: 'mem.json', dev: 'mem.json', out, version: '1.1', cased: fixtureVocab.cased,
      'max-len': windows.maxLen, 'doc-stride': windows.docStride, 'max-query-len': windows.maxQueryLen, lr: 1e-3, 'warmup-proportion': 0.1,
      'weight-decay': 0.01, clip: 1, epochs: 2, 'batch-size': 2, accumulate: 2, seed: 1, backend: 'cpu', 'log-every': 1, 'n-best': 5, 'max-answer-len': 6, 'null-threshold': 0,
    }
    const {writer, records} = memoryWriter()
    const tensors = tf.memory().numTensors
    const progress = {start: () => {}, update: () => {}, stop: () => {}}
    const a = squadAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path, train: dataset, dev: dataset}, () => {})
    const {best} = await finetune(a, c, {resume: null, stopAt: null}, {out: writer, log: () => {}, progress})
    await writer.end()
    expect(tf.memory().numTensors).toBe(tensors)
    const recs = records()
    const dev = recs.filter((r) => r.split === 'dev')
    expect(dev).toHaveLength(2)
    expect(best).toBe(Math.max(...dev.map((r) => r.f1 as number)))
    expect(recs.filter((r) => !r.split && !r.checkpoint).every((r) => Number.isFinite(r.loss))).toBe(true)
    expect(Array.from(model.params.get('qa_outputs.weight').dataSync())).not.toEqual(before)
    for (const f of ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json', 'special_tokens_map.json', 'finetune_config.json']) expect(existsSync(join(out, 'best', f)), f).toBe(true)
    model.dispose()
  })
})
