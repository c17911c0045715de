// `finetune nli --span-ft`: SNLI pairs take the sentence-pair Span Fine-tuning path of finetune glue
// (spans per sentence, [CLS]/[SEP] one-token spans), SNLI's defaults from the reference's run_glue.sh
// snli line, and the nli adapter's training path with the span CNN: trains, scores dev, saves the
// dictionary beside the model, leaves no tensor behind.
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification} from '../../../src/core/model/classifier.js'
import {SPAN_FT_DICT_FILE} from '../../../src/core/model/span-index.js'
import {spanFtSettings} from '../../../src/core/model/span-ft.js'
import {GlueFeaturizer} from '../../../src/core/tasks/glue/features.js'
import {shuffleTrainSpans, spanFtConfig} from '../../../src/core/tasks/glue/span-ft.js'
import {NLI_TASK, SNLI_SPAN_DEFAULTS, nliAdapter, nliFeatures, nliUnits} from '../../../src/core/tasks/nli/train.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import {NgramDict} from '../../../src/core/text/ngrams.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from '../train/helpers.js'

const tokenizer = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const dict = new NgramDict({maxN: 5, minCount: 1, maxSize: null, entries: 2}, new Set(['the old man', 'the river']))
const pair = (premise: string, hypothesis: string, label: number, i = 0) => ({id: String(i), premise, hypothesis, label, line: i + 1})
const sfOf = (o: {segmentation?: 'dict' | 'random'; defaults?: 'reference' | 'paper'; maxSpans?: number; maxSpanTokens?: number} = {}) =>
  spanFtConfig({defaults: 'reference', padding: 0, cls: 'raw', segmentation: 'dict', maxLen: 32, ...o}, SNLI_SPAN_DEFAULTS)

beforeAll(async () => {
  await initBackend('cpu')
})

describe('SNLI pairs for Span Fine-tuning', () => {
  it("defaults: run_glue.sh's snli line (r 128, l 16), the paper's r 16, l 64; flags win", () => {
    expect(sfOf()).toMatchObject({max_spans: 128, max_span_tokens: 16, level: 'sentence', pool: 'reference'})
    expect(sfOf({defaults: 'paper'})).toMatchObject({max_spans: 16, max_span_tokens: 64})
    expect(sfOf({maxSpans: 10, maxSpanTokens: 4})).toMatchObject({max_spans: 10, max_span_tokens: 4})
  })

  it('[CLS], the premise spans, [SEP], the hypothesis spans, [SEP]; labels in NLI_LABELS order; plain pairs unchanged', () => {
    const fz = new GlueFeaturizer(NLI_TASK, tokenizer, {maxLen: 32, dict, spanFt: spanFtSettings(sfOf())})
    const [f] = nliFeatures([pair('the old man walked', 'the river is cold', 2)], fz)
    const na = tokenizer.encode('the old man walked').length
    const nb = tokenizer.encode('the river is cold').length
    const river = tokenizer.encode('the river').length
    expect(f.label).toBe(2)
    expect(f.secondStart).toBe(na + 2)
    expect(f.spans[0]).toEqual([0, 0])
    expect(f.spans).toContainEqual([na + 1, na + 1])
    expect(f.spans).toContainEqual([na + 2, na + 1 + river]) // "the river" is one span
    expect(f.spans.at(-1)).toEqual([na + nb + 2, na + nb + 2])
    const [plain] = nliUnits([pair('the old man walked', 'the river is cold', 2)], tokenizer, 32)
    expect(Array.from(plain.ids)).toEqual(Array.from(f.ids))
    expect(plain.spans).toEqual([])
  })
})

describe('the span-ft training path (nli)', () => {
  it.each(['dict', 'random'] as const)('segmentation %s: trains through the loop, saves the dictionary, no tensor left behind', async (segmentation) => {
    const out = mkdtempSync(join(tmpdir(), 'nli-sf-'))
    const dictPath = join(out, 'd.txt')
    writeFileSync(dictPath, 'the old man\t3\nthe river\t2\n')
    const sf = sfOf({segmentation, maxSpans: 8, maxSpanTokens: 4})
    const fz = new GlueFeaturizer(NLI_TASK, tokenizer, {maxLen: 24, dict, spanFt: spanFtSettings(sf)})
    const read = nliFeatures(
      [pair('the old man walked', 'a man walked', 0, 0), pair('the river is cold', 'the river is warm', 2, 1), pair('a good film', 'a long film', 1, 2)],
      fz,
    )
    const train = segmentation === 'random' ? shuffleTrainSpans(read, 1) : read
    const head = {num_labels: 3, labels: ['entailment', 'neutral', 'contradiction'], finetuning_task: 'nli', span_ft: sf}
    const model = BertForSequenceClassification.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 5)
    const config = tinySettings(out, {task: 'nli', 'max-len': 24, epochs: 1, seed: 3, 'span-ft': true, dict: dictPath})
    const {writer, records} = memoryWriter()
    const before = tf.memory().numTensors
    await finetune(
      nliAdapter({config, model, tokenizer, vocabPath: fixtureVocab.info.path}, train, read),
      config,
      {resume: null, stopAt: null},
      {out: writer, log: () => {}, progress: quietProgress},
    )
    await writer.end()
    expect(tf.memory().numTensors).toBe(before)
    const rs = records()
    expect(rs.filter((r) => !r.split && !r.checkpoint).every((r) => Number.isFinite(r.loss))).toBe(true)
    expect(rs.find((r) => r.split === 'dev')).toHaveProperty('accuracy')
    const best = join(out, 'best')
    expect(existsSync(join(best, SPAN_FT_DICT_FILE)), readdirSync(out).join(',')).toBe(true)
    model.dispose()
  })
})
