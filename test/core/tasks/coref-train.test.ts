// The coreference training path through the one fine-tuning loop, in process: a few steps on two
// synthetic documents with a tiny model, two learning rates, dev scored, best/ written, and no
// tensor left behind (the leak test of `finetune coref`).
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {type CorefFinetuneConfig, corefAdapter, corefUnits} from '../../../src/core/tasks/coref/adapter.js'
import {COREF_DEFAULTS} from '../../../src/core/tasks/coref/config.js'
import {parseConll} from '../../../src/core/tasks/coref/conll.js'
import {CorefModel} from '../../../src/core/tasks/coref/model.js'
import {corefDevScores} from '../../../src/core/tasks/coref/score.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter} from '../train/helpers.js'
import {litbankDoc} from './coref-helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'span-coref-train-'))
const progress = {start: () => {}, update: () => {}, stop: () => {}}

beforeAll(async () => {
  await initBackend('cpu')
})

describe('finetune coref in process', () => {
  it('trains, scores dev, writes best/, leaves no tensor behind; the head takes --task-lr', async () => {
    const docs = parseConll(litbankDoc('a', 3) + litbankDoc('b', 2), 'mem.conll')
    const head = {...COREF_DEFAULTS, max_segment_len: 12, max_training_segments: 2, ffnn_size: 8, feature_size: 4, coref_depth: 2, max_span_width: 5}
    const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
    const units = corefUnits(docs, tok, head)
    expect(units[0].segments.length).toBeGreaterThan(2) // a random run of 2 segments is drawn
    const model = CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 1)
    const out = join(dir, 'run')
    const c: CorefFinetuneConfig = {
      task: 'coref',
      init: 'test',
      train: 'mem',
      dev: 'mem',
      out,
      cased: fixtureVocab.cased,
      'max-len': 12,
      lr: 1e-4,
      'warmup-proportion': 0.1,
      'weight-decay': 0.01,
      clip: 1,
      epochs: 2,
      'batch-size': 1,
      accumulate: 1,
      seed: 1,
      backend: 'cpu',
      'log-every': 1,
      'task-lr': 1e-3,
      head,
    }
    const a = corefAdapter({config: c, model, vocabPath: fixtureVocab.info.path, dev: {gold: docs, units}, scorer: corefDevScores}, units)
    expect([a.lrScale?.('coref.f.weight'), a.lrScale?.('bert.encoder.layer.0.output.dense.weight')]).toEqual([10, 1])
    const {writer, records} = memoryWriter()
    const tensors = tf.memory().numTensors
    await finetune(a, c, {resume: null, stopAt: null}, {out: writer, log: () => {}, progress})
    await writer.end()
    expect(tf.memory().numTensors).toBe(tensors)
    const recs = records()
    expect(recs.filter((r) => typeof r.loss === 'number').every((r) => Number.isFinite(r.loss))).toBe(true)
    expect(recs.filter((r) => r.split === 'dev').map((r) => typeof r.conll_f1)).toEqual(['number', 'number'])
    expect(existsSync(join(out, 'best', 'model.safetensors'))).toBe(true)
    const saved = JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))
    expect(saved.coref.coref_depth).toBe(2)
    model.dispose()
  })
})
