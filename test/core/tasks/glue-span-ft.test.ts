// `finetune glue --span-ft` as the reference lays its inputs (BAORONGZHOU/span-fine-tuning@bca4358,
// data_processor.py / dense_sent_tokenization.py / run_classifier_direct.py): [CLS]/[SEP] one-token
// spans, spans counted per sentence, the reference's segmentation loop, the per-task defaults, the
// segmentation modes of the ablations, padding and [CLS] options, and the training path without leaks.
import * as tf from '@tensorflow/tfjs'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification, type HeadConfig} from '../../../src/core/model/classifier.js'
import {shuffleSpanLengths} from '../../../src/core/model/span-index.js'
import {type SpanFtConfig, spanFtSettings} from '../../../src/core/model/span-ft.js'
import {EVAL} from '../../../src/core/model/layers.js'
import {GlueFeaturizer, collateGlue} from '../../../src/core/tasks/glue/features.js'
import {glueSpanFt, shuffleTrainSpans} from '../../../src/core/tasks/glue/span-ft.js'
import {GLUE_TASKS} from '../../../src/core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, glueAdapter} from '../../../src/core/tasks/glue/train.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import {NgramDict} from '../../../src/core/text/ngrams.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from '../train/helpers.js'

const tokenizer = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const dict = new NgramDict({maxN: 5, minCount: 1, maxSize: null, entries: 2}, new Set(['the old man', 'the river']))
const ex = (a: string, b: string | null) => ({index: '0', a, b, label: '1', line: 2})
const opts = (o: Partial<Parameters<typeof glueSpanFt>[0]> = {}) =>
  glueSpanFt({task: 'MRPC', defaults: 'reference', padding: 0, cls: 'raw', segmentation: 'dict', maxLen: 64, ...o})

beforeAll(async () => {
  await initBackend('cpu')
})

describe("the reference's segmentation loop (MultiTokenizer.tokenize)", () => {
  it('longest n-gram first from the left; a window past the end is cut to end before the last word, and stays that long', () => {
    const d = new NgramDict({maxN: 5, minCount: 1, maxSize: null, entries: 2}, new Set(['a b', 'b c', 'c d e']))
    expect(d.segmentAsReference(['a', 'b', 'x'])).toEqual([
      [0, 2],
      [2, 3],
    ]) // i = 0: window cut to 3 − 1 − 0 = 2, "a b" fits
    // i = 0: window cut to 4 − 1 = 3 ("x y b"); i = 1: 1 + 3 = 4 fits ("y b c"); i = 2: cut to 4 − 1 − 2 = 1, no n-gram
    expect(d.segmentAsReference(['x', 'y', 'b', 'c'])).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
    ])
    expect(d.segment(['x', 'y', 'b', 'c'])).toEqual([
      [0, 1],
      [1, 2],
      [2, 4],
    ]) // our own greedy loop finds "b c"
    // i = 0: 0 + 5 = 5 fits; i = 1: cut to 5 − 1 − 1 = 3; i = 2: 2 + 3 = 5 fits, "c d e" found
    expect(d.segmentAsReference(['x', 'y', 'c', 'd', 'e'])).toEqual([
      [0, 1],
      [1, 2],
      [2, 5],
    ])
    // a two-word sentence: the window is cut to 1 word at once, so "a b" is never tried
    expect(d.segmentAsReference(['a', 'b'])).toEqual([
      [0, 1],
      [1, 2],
    ])
  })
})

describe('defaults: the reference scripts, the paper on request', () => {
  it("r per task from run_glue.sh/script.py, l 16; 'paper' gives §4.1's r 16, l 64/128; flags win", () => {
    expect(opts()).toEqual({
      max_spans: 64,
      max_span_tokens: 16,
      padding: 0,
      pool: 'reference',
      cls: 'raw',
      segmentation: 'dict',
      level: 'sentence',
      truncation: 'bert',
    })
    expect(opts({task: 'QQP'}).max_spans).toBe(100)
    expect(opts({task: 'MNLI'}).max_spans).toBe(128)
    expect(opts({task: 'CoLA'}).max_spans).toBe(48)
    expect(opts({defaults: 'paper'})).toMatchObject({max_spans: 16, max_span_tokens: 64})
    expect(opts({defaults: 'paper', task: 'QNLI'})).toMatchObject({max_spans: 16, max_span_tokens: 128})
    expect(opts({maxSpans: 10, maxSpanTokens: 5})).toMatchObject({max_spans: 10, max_span_tokens: 5})
    expect(opts({segmentation: 'none'})).toMatchObject({max_spans: 1, max_span_tokens: 64})
    expect(() => opts({maxSpanTokens: 2})).toThrow('--max-span-tokens ≥ 3 with --span-ft-padding 0')
    expect(opts({maxSpanTokens: 2, padding: 1}).max_span_tokens).toBe(2)
  })

  it('a config.json without the new keys reads as the earlier module (padding 1, masked pools, pooled [CLS])', () => {
    expect(spanFtSettings({max_spans: 16, max_span_tokens: 8})).toMatchObject({padding: 1, pool: 'masked', cls: 'pooled', segmentation: 'dict'})
  })
})

describe('spans counted per sentence', () => {
  it('[CLS], a, [SEP], b, [SEP] with one-token special spans; a long first sentence leaves the second its spans', () => {
    const sf = spanFtSettings(opts({maxSpans: 8})) // ⌊8/2⌋ − 3 = 1 span per sentence of a pair
    const fz = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 64, dict, spanFt: sf})
    const f = fz.feature(ex('the old man walked to the shop and back again', 'the river is cold'))
    const na = tokenizer.encode('the old man walked to the shop and back again').length
    const nb = tokenizer.encode('the river is cold').length
    const n = (t: string) => tokenizer.encode(t).length
    expect(f.spans).toEqual([
      [0, 0],
      [1, n('the old man')],
      [na + 1, na + 1],
      [na + 2, na + 1 + n('the river')],
      [na + nb + 2, na + nb + 2],
    ])
    const wide = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 64, dict, spanFt: spanFtSettings(opts({maxSpans: 64}))}).feature(
      ex('the old man walked', 'the river'),
    )
    expect(wide.spans.reduce((n, [s, e]) => n + e - s + 1, 0)).toBe(wide.ids.length) // the spans tile the sequence
    const single = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 64, dict, spanFt: spanFtSettings(opts({maxSpans: 5}))})
    expect(single.feature(ex('the old man walked to the river', null)).spans).toHaveLength(4) // [CLS], r − 3 = 2 spans, [SEP]
  })
})

describe("--span-ft-truncation reference (the reference's per-sentence cut)", () => {
  it('keeps whole spans while fewer than C − 3 and their tokens fit in M − 3, per sentence; the cut drops the tokens too', () => {
    const text = 'the old man walked to the river'
    const n = (t: string) => tokenizer.encode(t).length
    // a pair with max-len 24: M = ⌊24/2⌋ − 2 = 10, so ≤ 7 tokens per sentence; r = 12: C = 6, ≤ 3 spans per sentence
    const sf = spanFtSettings({...opts({maxSpans: 12, maxLen: 24}), truncation: 'reference'})
    const f = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 24, dict, spanFt: sf}).feature(ex(text, 'the river'))
    const kept = ['the old man', 'walked', 'to'] // 3 spans (C − 3), whatever their tokens
    const na = n(kept.join(' '))
    expect(na).toBeLessThanOrEqual(7)
    const b = tokenizer.encode('the river')
    expect(Array.from(f.ids)).toEqual([fixtureVocab.special.cls, ...tokenizer.encode(kept.join(' ')), fixtureVocab.special.sep, ...b, fixtureVocab.special.sep])
    expect(f.secondStart).toBe(na + 2)
    expect(f.spans).toEqual([
      [0, 0],
      [1, n('the old man')],
      [n('the old man') + 1, n('the old man walked')],
      [n('the old man walked') + 1, na],
      [na + 1, na + 1],
      [na + 2, na + 2],
      [na + 3, na + 1 + b.length],
      [na + b.length + 2, na + b.length + 2],
    ])
    // a single sentence: C = r, M = max-len: with max-len 6, 3 tokens fit
    const one = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {
      maxLen: 6,
      dict,
      spanFt: spanFtSettings({...opts({maxSpans: 64}), truncation: 'reference'}),
    })
    const g = one.feature(ex(text, null))
    expect(g.ids.length).toBe(2 + n('the old man'))
    expect(g.spans).toEqual([
      [0, 0],
      [1, n('the old man')],
      [n('the old man') + 1, n('the old man') + 1],
    ])
  })
})

describe('segmentation modes', () => {
  it('random: the span lengths shuffled (seeded), tiling the same tokens; dev keeps the dictionary spans', () => {
    const spans: [number, number][] = [
      [0, 0],
      [1, 3],
      [4, 4],
      [5, 6],
      [7, 7],
    ]
    const s = shuffleSpanLengths(spans, new Rng(4))
    expect(s.map(([a, b]) => b - a + 1).sort()).toEqual([1, 1, 1, 2, 3])
    expect(s[0][0]).toBe(0)
    expect(s.at(-1)![1]).toBe(7)
    s.slice(1).forEach(([a], i) => expect(a).toBe(s[i][1] + 1))
    const fz = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 32, dict, spanFt: spanFtSettings(opts())})
    const fs = ['the old man walked to the river', 'a man saw the river'].map((t) => fz.feature(ex(t, null)))
    const shuffled = shuffleTrainSpans(fs, 1)
    expect(shuffleTrainSpans(fs, 1)).toEqual(shuffled)
    expect(shuffled.map((f) => f.spans.map(([a, b]) => b - a + 1).sort())).toEqual(fs.map((f) => f.spans.map(([a, b]) => b - a + 1).sort()))
  })

  it('none: one span over every token, r = 1 and l = max-len, no dictionary needed', () => {
    const sf = spanFtSettings(opts({segmentation: 'none', maxLen: 32}))
    const fz = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 32, dict: null, spanFt: sf})
    const f = fz.feature(ex('the old man', 'the river'))
    expect(f.spans).toEqual([[0, f.ids.length - 1]])
  })
})

describe('classifier inputs', () => {
  const config = smallConfig({vocab_size: fixtureVocab.tokens.length})
  const head = (sf: SpanFtConfig): HeadConfig => ({num_labels: 2, labels: ['0', '1'], finetuning_task: 'MRPC', span_ft: sf})
  it.each([
    ['raw', 0],
    ['pooled', 1],
    ['none', 0],
  ] as const)('cls %s, padding %i: logits [B, 2] and the classifier sized to what it sees', (cls, padding) => {
    const sf = opts({cls, padding: padding as 0 | 1, maxSpans: 8, maxSpanTokens: 4})
    const m = BertForSequenceClassification.init(config, head(sf), 1)
    expect(m.params.get('classifier.weight').shape).toEqual([2, cls === 'none' ? 16 : 32])
    const fz = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 32, dict, spanFt: spanFtSettings(sf)})
    const b = collateGlue([fz.feature(ex('the old man', 'the river')), fz.feature(ex('a man', 'a dog'))], fixtureVocab.special.pad, {r: 8, l: 4}, false)
    const before = tf.memory().numTensors
    const y = tf.tidy(() => m.forward(b, EVAL))
    expect(y.shape).toEqual([2, 2])
    y.dispose()
    expect(tf.memory().numTensors).toBe(before)
    m.dispose()
  })
})

describe('the span-ft training path (glue)', () => {
  it.each(['dict', 'random', 'none'] as const)('segmentation %s: trains through the loop, no tensor left behind', async (segmentation) => {
    const out = mkdtempSync(join(tmpdir(), 'glue-sf-'))
    const dictPath = join(out, 'd.txt')
    writeFileSync(dictPath, 'the old man\t3\nthe river\t2\n')
    const sf = opts({task: 'SST-2', segmentation, maxSpans: 8, maxSpanTokens: 4, maxLen: 16})
    const fz = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 16, dict: segmentation === 'none' ? null : dict, spanFt: spanFtSettings(sf)})
    const texts = ['the old man walked', 'the river is cold', 'a good film', 'a bad film']
    const read = texts.map((t, i) => fz.feature({index: String(i), a: t, b: null, label: String(i % 2), line: i + 2}))
    const train = segmentation === 'random' ? shuffleTrainSpans(read, 1) : read
    const model = BertForSequenceClassification.init(
      smallConfig({vocab_size: fixtureVocab.tokens.length}),
      {num_labels: 2, labels: ['0', '1'], finetuning_task: 'SST-2', span_ft: sf},
      5,
    )
    const c: GlueFinetuneConfig = tinySettings(out, {
      task: 'SST-2',
      'max-len': 16,
      epochs: 1,
      seed: 3,
      'span-ft': true,
      dict: segmentation === 'none' ? null : dictPath,
      'max-spans': sf.max_spans,
      'max-span-tokens': sf.max_span_tokens,
      segmentation,
    })
    const {writer, records} = memoryWriter()
    const before = tf.memory().numTensors
    await finetune(
      glueAdapter({config: c, task: GLUE_TASKS['SST-2'], model, padId: fixtureVocab.special.pad, vocabPath: fixtureVocab.info.path, train, dev: read}),
      c,
      {resume: null, stopAt: null},
      {out: writer, log: () => {}, progress: quietProgress},
    )
    await writer.end()
    expect(tf.memory().numTensors).toBe(before)
    expect(
      records()
        .filter((r) => !r.split && !r.checkpoint)
        .every((r) => Number.isFinite(r.loss)),
    ).toBe(true)
    expect(JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8')).span_ft).toMatchObject({segmentation, padding: 0, cls: 'raw'})
    model.dispose()
  })
})
