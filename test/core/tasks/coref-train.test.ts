// The coreference training path through the one fine-tuning loop, in process, for both heads: a
// few steps on two synthetic documents with a tiny model, two learning rates, dev scored, best/
// written, the coref metrics as TensorBoard scalars, and no tensor left behind (the leak test of
// `finetune coref`, each head).
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, readFileSync, readdirSync} from 'node:fs'
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
import {openScalars} from '../../../src/core/train/metrics.js'
import {readEvents} from '../../../src/core/train/tensorboard.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from '../train/helpers.js'
import {litbankDoc} from './coref-helpers.js'

const dir = mkdtempSync(join(tmpdir(), 'span-coref-train-'))

beforeAll(async () => {
  await initBackend('cpu')
})

describe('finetune coref in process', () => {
  it.each(['joshi', 's2e'] as const)(
    '--head %s: trains, scores dev, writes best/ and TensorBoard scalars, leaves no tensor behind; the head takes --task-lr',
    async (headType) => {
      const docs = parseConll(litbankDoc('a', 3) + litbankDoc('b', 2), 'mem.conll')
      const head = {
        ...COREF_DEFAULTS,
        head_type: headType,
        max_segment_len: 12,
        max_training_segments: 2,
        ffnn_size: 8,
        feature_size: 4,
        coref_depth: 2,
        max_span_width: 5,
      }
      const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
      const units = corefUnits(docs, tok, head)
      expect(units[0].segments.length).toBeGreaterThan(2) // a random run of 2 segments is drawn
      const model = CorefModel.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 1)
      const out = join(dir, `run-${headType}`)
      const c: CorefFinetuneConfig = tinySettings(out, {
        task: 'coref',
        cased: fixtureVocab.cased,
        'max-len': 12,
        lr: 1e-4,
        'batch-size': 1,
        'task-lr': 1e-3,
        head,
      })
      const a = corefAdapter({config: c, model, vocabPath: fixtureVocab.info.path, dev: {gold: docs, units}, scorer: corefDevScores}, units)
      expect([a.lrScale?.(model.params.entries().at(-1)?.[0] ?? ''), a.lrScale?.('bert.encoder.layer.0.output.dense.weight')]).toEqual([10, 1])
      const {writer, records} = memoryWriter()
      const tb = join(dir, `tb-${headType}`)
      const scalars = await openScalars(tb)
      const tensors = tf.memory().numTensors
      const counts: number[] = []
      await finetune(
        a,
        c,
        {resume: null, stopAt: null},
        {out: writer, log: () => {}, progress: quietProgress, scalars, onStep: () => counts.push(tf.memory().numTensors)},
      )
      await scalars.close()
      await writer.end()
      expect(counts.slice(1)).toEqual(counts.slice(1).map(() => counts[1])) // AdamW's moments at step 1, then flat
      expect(tf.memory().numTensors).toBe(tensors)
      const recs = records()
      expect(recs.filter((r) => typeof r.loss === 'number').every((r) => Number.isFinite(r.loss))).toBe(true)
      expect(recs.filter((r) => r.split === 'dev').map((r) => typeof r.conll_f1)).toEqual(['number', 'number'])
      expect(existsSync(join(out, 'best', 'model.safetensors'))).toBe(true)
      const saved = JSON.parse(readFileSync(join(out, 'best', 'config.json'), 'utf8'))
      expect([saved.coref.coref_depth, saved.coref.head_type]).toEqual([2, headType])
      const events = await readEvents(join(tb, readdirSync(tb).filter((f) => f.startsWith('events.out.tfevents.'))[0]))
      const tags = new Set(events.flatMap((e) => e.scalars.map((x) => x.tag)))
      for (const t of ['train/loss', 'train/lr', 'dev/conll_f1', 'dev/muc_f1', 'dev/bcub_f1', 'dev/ceafe_f1', 'dev/mention_f1'])
        expect(tags.has(t), t).toBe(true)
      const f1 = events.flatMap((e) => e.scalars.filter((x) => x.tag === 'dev/conll_f1').map((x) => x.value))
      expect(f1).toEqual(recs.filter((r) => r.split === 'dev').map((r) => expect.closeTo(r.conll_f1 as number, 3)))
      model.dispose()
    },
  )
})
