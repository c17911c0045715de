// Span Fine-tuning's token-level variant for NER (Bao et al. §5.4; the reference's
// ChunkLevelFeatureEncoderNERCNN): window spans ([CLS], the dictionary's segments, [SEP]), the
// token vectors against a loop, and the training path through the fine-tuning loop without leaks.
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {ParamStore, normals} from '../../../src/core/model/params.js'
import {spanIndex} from '../../../src/core/model/span-index.js'
import {spanFtTokenForward} from '../../../src/core/model/span-ft.js'
import {BertForTokenClassification} from '../../../src/core/model/token-classifier.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import {nerFeatures} from '../../../src/core/tasks/ner/features.js'
import {nerLabels, parseConll} from '../../../src/core/tasks/ner/read.js'
import {nerAdapter, nerSpanFt, nerUnits, predictTags, randomSegmentation} from '../../../src/core/tasks/ner/train.js'
import {NgramDict} from '../../../src/core/text/ngrams.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from '../train/helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const dict = new NgramDict({maxN: 5, minCount: 1, maxSize: null, entries: 2}, new Set(['the man', 'new york city']))
const dir = mkdtempSync(join(tmpdir(), 'span-ner-sf-'))

beforeAll(async () => {
  await initBackend('cpu')
})

describe('NER windows for Span Fine-tuning', () => {
  it('[CLS], the segments as sub-token ranges, [SEP]; spans past r − 3 dropped', () => {
    const words = ['the', 'man', 'walked', 'to', 'new', 'york', 'city', 'today']
    const segments = dict.segmentAsReference(words)
    expect(segments).toEqual([
      [0, 2],
      [2, 3],
      [3, 4],
      [4, 7],
      [7, 8],
    ])
    const [f] = nerFeatures(words, null, 0, tok, 64, 16, {segments, r: 64})
    const n = f.ids.length
    const firstOf = (w: string) => Array.from(f.ids).indexOf(tok.encode(w)[0])
    expect(f.spans[0]).toEqual([0, 0])
    expect(f.spans[f.spans.length - 1]).toEqual([n - 1, n - 1])
    expect(f.spans[1]).toEqual([1, firstOf('walked') - 1])
    expect(f.spans[4]).toEqual([firstOf('new'), firstOf('today') - 1])
    // the spans tile positions 0..n-1
    expect(f.spans.reduce((a, [s, e]) => a + e - s + 1, 0)).toBe(n)
    const [g] = nerFeatures(words, null, 0, tok, 64, 16, {segments, r: 5})
    expect(g.spans).toHaveLength(4) // [CLS], r − 3 = 2 segments, [SEP]
  })

  it('a long sentence: each window keeps the parts of the segments inside it', () => {
    const words = ['the', 'man', 'walked', 'to', 'new', 'york', 'city', 'today', 'the', 'man']
    const fs = nerFeatures(words, null, 0, tok, 8, 3, {segments: dict.segmentAsReference(words), r: 64})
    expect(fs.length).toBeGreaterThan(1)
    for (const f of fs) {
      const T = f.ids.length
      expect(f.spans[0]).toEqual([0, 0])
      expect(f.spans[f.spans.length - 1]).toEqual([T - 1, T - 1])
      for (const [s, e] of f.spans) expect(s >= 0 && e <= T - 1 && s <= e).toBe(true)
    }
  })
})

/** The reference's NER_CNN by loops: per span, Conv1d(padding 1) over its zero-filled slots → ReLU; scattered to tokens. */
function tokenLoop(h: number[][][], spans: [number, number][][], l: number, w: number[][][], bias: number[]): number[][] {
  const H = bias.length
  const out = h.flatMap((row) => row.map(() => new Array(H).fill(0)))
  const T = h[0].length
  spans.forEach((row, b) =>
    row.forEach(([s, e]) => {
      const n = Math.min(e - s + 1, l)
      const slots = Array.from({length: l}, (_, j) => (j < n ? h[b][s + j] : new Array(H).fill(0)))
      for (let j = 0; j < n; j++) {
        out[b * T + s + j] = bias.map((bo, o) => {
          let v = bo
          for (let c = 0; c < H; c++) for (let k = 0; k < 3; k++) if (j + k - 1 >= 0 && j + k - 1 < l) v += w[o][c][k] * slots[j + k - 1][c]
          return Math.max(0, v)
        })
      }
    }),
  )
  return out
}

describe("--segmentation random (run_ner.py's --do_random)", () => {
  const words = ['the', 'man', 'walked', 'to', 'new', 'york', 'city', 'today']
  const feats = () => nerFeatures(words, null, 0, tok, 64, 16, {segments: dict.segmentAsReference(words), r: 64})
  const lens = (spans: [number, number][]) => spans.map(([s, e]) => e - s + 1)
  it('each window: the same span lengths, shuffled, tiling the same tokens from [CLS]; train then dev from one seeded stream', () => {
    const [f] = feats()
    const [train, dev] = randomSegmentation(7, [f, f, f], [f, f])
    const all = [...train, ...(dev ?? [])]
    expect(all).toHaveLength(5)
    for (const g of all) {
      expect(g.ids).toBe(f.ids) // tokens and labels are kept
      expect(lens(g.spans).sort()).toEqual(lens(f.spans).sort())
      expect(g.spans[0][0]).toBe(0)
      g.spans.slice(1).forEach(([s], i) => expect(s).toBe(g.spans[i][1] + 1))
      expect(g.spans.at(-1)?.[1]).toBe(f.ids.length - 1)
    }
    // dev is shuffled too (unlike glue's random mode), and continues the stream after train
    expect(all.some((g) => JSON.stringify(g.spans) !== JSON.stringify(f.spans))).toBe(true)
    expect(new Set(all.map((g) => JSON.stringify(g.spans))).size).toBeGreaterThan(1)
    const [again, againDev] = randomSegmentation(7, [f, f, f], [f, f])
    expect([...again, ...(againDev ?? [])].map((g) => g.spans)).toEqual(all.map((g) => g.spans))
    expect(randomSegmentation(8, [f, f, f])[0].map((g) => g.spans)).not.toEqual(train.map((g) => g.spans))
    expect(nerSpanFt(8, 4, 'random')).toMatchObject({segmentation: 'random', level: 'token', padding: 1})
  })
})

describe('the token-level span CNN', () => {
  it('equals the loop: Conv1d padding 1 → ReLU per span, each token its own slot, 0 outside spans', () => {
    const [B, T, H, l] = [2, 7, 4, 3]
    const rng = new Rng(3)
    const hv = normals(B * T * H, 1, rng)
    const wv = normals(H * H * 3, 0.5, rng)
    const bv = normals(H, 0.5, rng)
    const p = new ParamStore()
    p.set('span_ft.token_conv.weight', tf.tensor3d(wv, [H, H, 3]))
    p.set('span_ft.token_conv.bias', tf.tensor1d(bv))
    const spans: [number, number][][] = [
      [
        [0, 0],
        [1, 4],
        [5, 5],
      ],
      [
        [0, 0],
        [1, 2],
        [3, 3],
      ],
    ] // row 0's second span is cut at l = 3; row 1 leaves 4..6 outside
    const got = tf.tidy(() => spanFtTokenForward(p, tf.tensor3d(hv, [B, T, H]), spanIndex(spans, T, 4, l, true)).arraySync())
    const h3 = Array.from({length: B}, (_, b) => Array.from({length: T}, (_, t) => Array.from(hv.slice((b * T + t) * H, (b * T + t + 1) * H))))
    const w3 = Array.from({length: H}, (_, o) => Array.from({length: H}, (_, c) => Array.from({length: 3}, (_, k) => wv[(o * H + c) * 3 + k])))
    const want = tokenLoop(h3, spans, l, w3, Array.from(bv))
    got.forEach((row, i) => row.forEach((v, k) => expect(v).toBeCloseTo(want[i][k], 5)))
    expect(got[4].every((v) => v === 0)).toBe(true) // row 0, token 4: past l in its span
    p.dispose()
  })
})

describe('finetune ner --span-ft through the loop', () => {
  it('trains, scores dev, saves the dictionary beside the model; no tensor left behind', async () => {
    const file = parseConll('-DOCSTART- O\n\nthe O\nman I-PER\nwalked O\n\nthe O\nriver I-LOC\n', 'n', {labeled: true})
    const labels = nerLabels(file.sentences)
    const dictPath = join(dir, 'd.txt')
    writeFileSync(dictPath, '#span-ngrams v1 max_n=5 min_count=1 max_size=none entries=1\nthe man\t3\n')
    const out = join(dir, 'ner')
    const c = tinySettings(out, {
      task: 'ner' as const,
      cased: fixtureVocab.cased,
      scheme: 'iob1' as const,
      stride: 4,
      labels,
      'span-ft': true,
      dict: dictPath,
      'max-spans': 8,
      'max-span-tokens': 4,
    })
    const units = nerUnits(file, labels, tok, 32, 4, {dict, r: 8})
    const model = BertForTokenClassification.init(
      smallConfig({vocab_size: fixtureVocab.tokens.length}),
      {num_labels: labels.length, labels, finetuning_task: 'ner', span_ft: nerSpanFt(8, 4)},
      1,
    )
    expect(model.params.has('span_ft.token_conv.weight')).toBe(true)
    expect(model.params.get('classifier.weight').shape).toEqual([labels.length, 32])
    const {writer, records} = memoryWriter()
    const before = tf.memory().numTensors
    await finetune(
      nerAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path, dev: file}, units, units),
      c,
      {resume: null, stopAt: null},
      {out: writer, log: () => {}, progress: quietProgress},
    )
    await writer.end()
    const tags = await predictTags(model, file, units, labels, 'iob1', 2, fixtureVocab.special.pad)
    expect(tf.memory().numTensors).toBe(before)
    expect(tags.map((t) => t.length)).toEqual(file.sentences.map((s) => s.words.length))
    expect(records().filter((r) => r.split === 'dev')).toHaveLength(2)
    expect(existsSync(join(out, 'best', 'span_ft_ngrams.txt'))).toBe(true)
    const saved = JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))
    expect(saved.span_ft).toMatchObject({max_spans: 8, max_span_tokens: 4, padding: 1, level: 'token'})
    model.dispose()
  })
})
