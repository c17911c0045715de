// GLUE features (BERT run_classifier's layout and truncation; Span Fine-tuning's dictionary spans)
// and the fine-tuning loop on a tiny model: the loss falls, dev is scored, the checkpoint is whole.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Writable} from 'node:stream'
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification, type HeadConfig, headFromJson, loadClassifier} from '../../../src/core/model/classifier.js'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {GlueFeaturizer, collateGlue, labelValue, truncateSeqPair} from '../../../src/core/tasks/glue/features.js'
import {spanIndex} from '../../../src/core/model/span-index.js'
import {GLUE_TASKS} from '../../../src/core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, glueAdapter} from '../../../src/core/tasks/glue/train.js'
import {finetune, finetuneSchedule} from '../../../src/core/train/finetune-loop.js'
import {NgramDict} from '../../../src/core/text/ngrams.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab} from '../train/helpers.js'

const tokenizer = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const {cls, sep, pad} = fixtureVocab.special
const dict = new NgramDict({maxN: 5, minCount: 1, maxSize: null, entries: 2}, new Set(['the old man', 'the river']))
const example = (a: string, b: string | null, label: string | null = '1') => ({index: '7', a, b, label, line: 2})

beforeAll(async () => {
  await initBackend('cpu')
})

describe('truncateSeqPair', () => {
  it('drops the last token of the longer list until the pair fits (BERT _truncate_seq_pair)', () => {
    const a = [1, 2, 3, 4, 5, 6]
    const b = [7, 8, 9]
    truncateSeqPair(a, b, 6)
    expect([a, b]).toEqual([[1, 2, 3], [7, 8, 9]])
    const c = [1, 2]
    const d = [3, 4, 5, 6]
    truncateSeqPair(c, d, 3)
    expect([c, d]).toEqual([[1, 2], [3]])
  })
})

describe('GlueFeaturizer', () => {
  it('lays out [CLS] a [SEP] b [SEP] with segment ids 0 then 1 and the label as a class number', () => {
    const fz = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 64, dict: null})
    const f = fz.feature(example('The old man walked.', 'He saw the river.'))
    const a = tokenizer.encode('The old man walked.')
    const b = tokenizer.encode('He saw the river.')
    expect(Array.from(f.ids)).toEqual([cls, ...a, sep, ...b, sep])
    expect(f.secondStart).toBe(a.length + 2)
    expect(f.label).toBe(1)
    expect(f.spans).toEqual([])
    const batch = collateGlue([f], pad, null, false)
    expect(Array.from(batch.segments)).toEqual(Array.from(f.ids, (_, t) => (t < a.length + 2 ? 0 : 1)))
  })

  it('truncates a single sentence to max-len − 2 tokens', () => {
    const fz = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 6, dict: null})
    const f = fz.feature(example('the old man walked to the river in the morning', null, '0'))
    expect(f.ids.length).toBe(6)
    expect([f.ids[0], f.ids[5]]).toEqual([cls, sep])
    expect(f.secondStart).toBe(6)
    expect(f.label).toBe(0)
  })

  it('turns dictionary segments into token spans of the sequence, cut where the sentence was cut', () => {
    const fz = new GlueFeaturizer(GLUE_TASKS.MRPC, tokenizer, {maxLen: 64, dict})
    const f = fz.feature(example('The old man walked', 'to the river'))
    const a = tokenizer.tokenize('The old man walked')
    const words = (s: number, e: number) => f.ids.slice(s, e + 1)
    // sentence a: "the old man" | "walked"; sentence b (after [SEP]): "to" | "the river"
    expect(f.spans.length).toBe(4)
    expect(f.spans[0][0]).toBe(1)
    expect(f.spans[1][1]).toBe(a.length)
    expect(f.spans[2][0]).toBe(a.length + 2)
    expect(Array.from(words(...f.spans[3]))).toEqual(tokenizer.encode('the river'))
    const cut = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 4, dict}).feature(example('the old man walked', null))
    expect(cut.spans).toEqual([[1, 2]]) // "the old man" kept as its first 2 tokens
  })

  it('reads STS-B scores as regression targets', () => {
    expect(labelValue(GLUE_TASKS['STS-B'], '3.800')).toBeCloseTo(3.8)
    expect(labelValue(GLUE_TASKS.RTE, 'not_entailment')).toBe(1)
    expect(labelValue(GLUE_TASKS.RTE, null)).toBeNull()
  })
})

describe('spanIndex', () => {
  it('keeps at most r spans of at most l tokens, as flat positions b·T + t with a mask', () => {
    const idx = spanIndex([[[1, 3], [4, 4], [5, 5]], []], 6, 2, 2)
    expect(Array.from(idx.positions)).toEqual([1, 2, 4, 0, 0, 0, 0, 0])
    expect(Array.from(idx.mask)).toEqual([1, 1, 1, 0, 0, 0, 0, 0])
  })
})

const sink = () => {
  const chunks: string[] = []
  const out = new Writable({write: (c, _e, cb) => void (chunks.push(String(c)), cb())})
  return {writer: new LineWriter(out), lines: () => chunks.join('').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, number>)}
}

function runConfig(out: string, spanFt: boolean): GlueFinetuneConfig {
  return {
    task: 'SST-2', init: 'test', train: 'mem', dev: 'mem', out, cased: false, 'max-len': 16, lr: 3e-3, 'warmup-proportion': 0.1,
    'weight-decay': 0.01, clip: 1, epochs: 4, 'batch-size': 4, accumulate: 1, seed: 3, backend: 'cpu', 'log-every': 1, 'span-ft': spanFt,
    dict: null, 'max-spans': 4, 'max-span-tokens': 3,
  }
}

describe('finetuneGlue', () => {
  const texts = ['a good film', 'a bad film', 'good and fun', 'bad and dull', 'very good', 'very bad', 'good good', 'bad bad']
  it.each([false, true])('learns a toy task (span-ft %s), scores dev each epoch and saves the best checkpoint', async (spanFt) => {
    const fz = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 16, dict})
    const feats = texts.map((t, i) => fz.feature({index: String(i), a: t, b: null, label: String(1 - (i % 2)), line: i + 2}))
    const head: HeadConfig = {num_labels: 2, labels: ['0', '1'], finetuning_task: 'SST-2', span_ft: spanFt ? {max_spans: 4, max_span_tokens: 3} : null}
    const before = tf.memory().numTensors
    const model = BertForSequenceClassification.init(smallConfig({vocab_size: fixtureVocab.tokens.length, hidden_dropout_prob: 0}), head, 5)
    const out = mkdtempSync(join(tmpdir(), 'glue-train-'))
    const vocabPath = join(out, 'v.txt')
    writeFileSync(vocabPath, readFileSync(fixtureVocab.info.path))
    const s = sink()
    const logs: string[] = []
    const c = runConfig(out, spanFt)
    const progress = {start: () => {}, update: () => {}, stop: () => {}}
    await finetune(glueAdapter({config: c, task: GLUE_TASKS['SST-2'], model, padId: pad, vocabPath, train: feats, dev: feats}), c, {resume: null, stopAt: null},
      {out: s.writer, log: (l) => logs.push(l), progress})
    await s.writer.end()
    model.dispose()
    expect(tf.memory().numTensors).toBe(before) // no tensor left behind by training, scoring or saving
    const recs = s.lines()
    const steps = recs.filter((r) => !('split' in r) && !('checkpoint' in r))
    expect(steps.length).toBe(finetuneSchedule(runConfig(out, spanFt), 8).sched.total)
    expect(steps.at(-1)!.loss).toBeLessThan(steps[0].loss)
    expect(recs.filter((r) => 'split' in r).map((r) => r.epoch)).toEqual([1, 2, 3, 4])
    const best = join(out, 'best')
    const cfg = JSON.parse(readFileSync(join(best, 'config.json'), 'utf8'))
    expect([cfg.num_labels, cfg.id2label, cfg.label2id, cfg.problem_type]).toEqual([2, {0: '0', 1: '1'}, {0: 0, 1: 1}, 'single_label_classification'])
    expect(existsSync(join(best, 'finetune_config.json')) && existsSync(join(best, 'vocab.txt'))).toBe(true)
    const back = await loadClassifier(best, headFromJson(cfg, 'config.json'), 0)
    expect(back.initialised).toEqual([])
    expect(back.model.params.has('span_ft.token_conv.weight')).toBe(spanFt)
    back.model.dispose()
  })
})
