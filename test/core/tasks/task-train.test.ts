// Every issue-15 training path through the one fine-tuning loop: a few steps on tiny data with a
// tiny model, dev scored by the task's scorer, checkpoint files written, no tensor left behind.
import * as tf from '@tensorflow/tfjs'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification} from '../../../src/core/model/classifier.js'
import {BertForQuestionAnswering} from '../../../src/core/model/qa.js'
import {BertForTokenClassification} from '../../../src/core/model/token-classifier.js'
import type {TaskAdapter} from '../../../src/core/train/adapter.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import type {FinetuneSettings} from '../../../src/core/train/finetune-config.js'
import {readMrqaFile} from '../../../src/core/tasks/mrqa/read.js'
import {asSquad, mrqaAdapter} from '../../../src/core/tasks/mrqa/train.js'
import {nerLabels, parseConll} from '../../../src/core/tasks/ner/read.js'
import {nerAdapter, nerUnits} from '../../../src/core/tasks/ner/train.js'
import {nliAdapter, nliUnits} from '../../../src/core/tasks/nli/train.js'
import {readSwagFile} from '../../../src/core/tasks/swag/read.js'
import {swagAdapter, swagUnits} from '../../../src/core/tasks/swag/train.js'
import {MarkerVocab, relationIds} from '../../../src/core/tasks/tacred/features.js'
import {readRelationFile} from '../../../src/core/tasks/tacred/read.js'
import {relationUnits, tacredAdapter, type TacredFinetuneConfig} from '../../../src/core/tasks/tacred/train.js'
import type {SquadFinetuneConfig} from '../../../src/core/tasks/squad/train.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from '../train/helpers.js'

const tok = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const V = fixtureVocab.tokens.length
const dir = mkdtempSync(join(tmpdir(), 'span-task-train-'))
const ROOT = join(__dirname, '..', '..', '..')
const progress = quietProgress

beforeAll(async () => {
  await initBackend('cpu')
})

function settings(task: string, out: string): FinetuneSettings {
  return tinySettings(out, {task, cased: fixtureVocab.cased})
}

/** Runs the loop; checks tensors, finite losses, two dev records and the best/ files. */
async function trains<U, B>(a: TaskAdapter<U, B>, c: FinetuneSettings, metric: string): Promise<void> {
  const {writer, records} = memoryWriter()
  const tensors = tf.memory().numTensors
  await finetune(a, c, {resume: null, stopAt: null}, {out: writer, log: () => {}, progress})
  await writer.end()
  expect(tf.memory().numTensors).toBe(tensors)
  const recs = records()
  expect(recs.filter((r) => !r.split && !r.checkpoint).every((r) => Number.isFinite(r.loss))).toBe(true)
  const dev = recs.filter((r) => r.split === 'dev')
  expect(dev).toHaveLength(2)
  expect(dev.every((r) => Number.isFinite(r[metric]))).toBe(true)
  for (const f of ['config.json', 'model.safetensors', 'vocab.txt', 'finetune_config.json']) expect(existsSync(join(c.out, 'best', f))).toBe(true)
}

describe('the issue-15 tasks through the fine-tuning loop', () => {
  it('tacred: typed markers get new embedding rows; official P/R/F1 on dev', async () => {
    const p = join(dir, 'r.jsonl')
    const row = (rel: string, s: number, o: number) =>
      JSON.stringify({
        token: ['the', 'man', 'walked', 'to', 'the', 'river'],
        subj_start: s,
        subj_end: s,
        obj_start: o,
        obj_end: o,
        subj_type: 'PERSON',
        obj_type: 'LOC',
        relation: rel,
      })
    writeFileSync(p, [row('no_relation', 1, 5), row('per:at', 1, 5), row('per:at', 0, 2), row('no_relation', 3, 4)].join('\n') + '\n')
    const train = readRelationFile(p, {requireLabel: true})
    const markers = new MarkerVocab(V)
    const c: TacredFinetuneConfig = {
      ...settings('tacred', join(dir, 'tacred')),
      task: 'tacred',
      'feature-mode': 'ner',
      'negative-label': 'no_relation',
      labels: ['no_relation', 'per:at'],
      markers: [],
    }
    const units = relationUnits(train, {config: c, tokenizer: tok, markers})
    expect(markers.list).toEqual(['[SUBJ-PERSON]', '[OBJ-LOC]'])
    expect(units[0].ids[2]).toBe(V) // [CLS] the [SUBJ-PERSON] …
    const words = tok.encode('man').length + tok.encode('river').length
    expect(relationIds(train[0], 'text', tok, new MarkerVocab(V)).length).toBe(units[0].ids.length - 2 + words + 4) // words kept, 4 markers instead of 2
    const model = BertForSequenceClassification.init(
      smallConfig({vocab_size: V + 2}),
      {num_labels: 2, labels: c.labels, finetuning_task: 'tacred', span_ft: null},
      1,
    )
    await trains(tacredAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path, markers, train, dev: train}, units, units), c, 'f1')
    model.dispose()
  })

  it('ner: token classifier, conlleval F1 on dev', async () => {
    const file = parseConll('-DOCSTART- O\n\nthe O\nman I-PER\nwalked O\n\nthe O\nriver I-LOC\n', 'n', {labeled: true})
    const labels = nerLabels(file.sentences)
    const c = {...settings('ner', join(dir, 'ner')), task: 'ner' as const, scheme: 'iob1' as const, stride: 4, labels}
    const units = nerUnits(file, labels, tok, 32, 4)
    const model = BertForTokenClassification.init(smallConfig({vocab_size: V}), {num_labels: labels.length, labels, finetuning_task: 'ner', span_ft: null}, 1)
    await trains(nerAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path, dev: file}, units, units), c, 'f1')
    model.dispose()
  })

  it('nli: pairs, accuracy on dev', async () => {
    const ex = ['entailment', 'neutral', 'contradiction', 'neutral'].map((l, i) => ({
      id: String(i),
      premise: 'the man walked',
      hypothesis: `the river ${i}`,
      label: ['entailment', 'neutral', 'contradiction'].indexOf(l),
      line: i + 1,
    }))
    const c = settings('nli', join(dir, 'nli'))
    const units = nliUnits(ex, tok, 32)
    expect(units[0].secondStart).toBe(tok.encode('the man walked').length + 2)
    const model = BertForSequenceClassification.init(
      smallConfig({vocab_size: V}),
      {num_labels: 3, labels: ['entailment', 'neutral', 'contradiction'], finetuning_task: 'nli', span_ft: null},
      1,
    )
    await trains(nliAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path}, units, units), c, 'accuracy')
    model.dispose()
  })

  it('swag: one score per choice, softmax over the choices, accuracy on dev', async () => {
    const ex = readSwagFile(join(ROOT, 'fixtures', 'swag', 'handmade-dev.csv'), {requireLabel: true}).slice(0, 4)
    const c = settings('swag', join(dir, 'swag'))
    const units = swagUnits(ex, tok, 32)
    expect(units[0].choices).toHaveLength(4)
    const model = BertForSequenceClassification.init(smallConfig({vocab_size: V}), {num_labels: 1, labels: [], finetuning_task: 'swag', span_ft: null}, 1)
    await trains(swagAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path}, units, units), c, 'accuracy')
    model.dispose()
  })

  it('mrqa: SQuAD windows, the official MRQA scorer on dev', async () => {
    const p = join(dir, 'm.jsonl')
    const qa = (qid: string, s: number, e: number, a: string) => ({
      qid,
      question: 'where did he walk?',
      answers: [a],
      detected_answers: [{text: a, char_spans: [[s, e]]}],
    })
    writeFileSync(
      p,
      `{"header": {}}\n${JSON.stringify({context: 'The old man walked to the river in the morning.', qas: [qa('a', 22, 30, 'the river'), qa('b', 35, 45, 'the morning')]})}\n`,
    )
    const f = readMrqaFile(p, {needSpans: true})
    const c = {
      ...settings('mrqa', join(dir, 'mrqa')),
      task: 'mrqa',
      version: '1.1',
      'max-len': 24,
      'doc-stride': 8,
      'max-query-len': 8,
      'n-best': 5,
      'max-answer-len': 6,
      'null-threshold': 0,
    } as unknown as SquadFinetuneConfig
    const model = BertForQuestionAnswering.init(smallConfig({vocab_size: V}), 1)
    await trains(
      mrqaAdapter({config: c, model, tokenizer: tok, vocabPath: fixtureVocab.info.path, train: asSquad(f), dev: null}, f, () => {}),
      c,
      'f1',
    )
    model.dispose()
  })
})
