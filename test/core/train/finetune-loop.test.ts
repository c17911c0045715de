// The one fine-tuning loop with a GLUE adapter on a tiny model: --patience, --eval-every,
// --max-train-examples, --keep, seeded --group-by-length order, and no tensor left behind.
import * as tf from '@tensorflow/tfjs'
import {mkdtempSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {BertForSequenceClassification, type HeadConfig} from '../../../src/core/model/classifier.js'
import {GlueFeaturizer} from '../../../src/core/tasks/glue/features.js'
import {GLUE_TASKS} from '../../../src/core/tasks/glue/tasks.js'
import {type GlueFinetuneConfig, glueAdapter} from '../../../src/core/tasks/glue/train.js'
import {WordPieceTokenizer} from '../../../src/core/text/tokenizer.js'
import {finetune} from '../../../src/core/train/finetune-loop.js'
import {openScalars} from '../../../src/core/train/metrics.js'
import {epochOrder} from '../../../src/core/train/sampler.js'
import {readEvents} from '../../../src/core/train/tensorboard.js'
import {smallConfig} from '../model/helpers.js'
import {fixtureVocab, memoryWriter, quietProgress, tinySettings} from './helpers.js'

const tokenizer = new WordPieceTokenizer(fixtureVocab, {lowercase: !fixtureVocab.cased})
const texts = [
  'a good film',
  'a bad film',
  'good and fun',
  'bad and dull',
  'very good',
  'very bad',
  'good good',
  'bad bad',
  'so very good indeed',
  'not good at all, bad',
]
const fz = new GlueFeaturizer(GLUE_TASKS['SST-2'], tokenizer, {maxLen: 16, dict: null})
const feats = texts.map((t, i) => fz.feature({index: String(i), a: t, b: null, label: String(1 - (i % 2)), line: i + 2}))
const head: HeadConfig = {num_labels: 2, labels: ['0', '1'], finetuning_task: 'SST-2', span_ft: null}

function config(out: string, over: Partial<GlueFinetuneConfig> = {}): GlueFinetuneConfig {
  return tinySettings(out, {task: 'SST-2', 'max-len': 16, epochs: 3, seed: 3, 'span-ft': false, dict: null, 'max-spans': 4, 'max-span-tokens': 3, ...over})
}

async function run(over: Partial<GlueFinetuneConfig>, tensorboard?: string) {
  const out = mkdtempSync(join(tmpdir(), 'ft-loop-'))
  const c = config(out, over)
  const model = BertForSequenceClassification.init(smallConfig({vocab_size: fixtureVocab.tokens.length}), head, 5)
  const {writer, records} = memoryWriter()
  const counts: number[] = []
  const scalars = await openScalars(tensorboard)
  const r = await finetune(
    glueAdapter({config: c, task: GLUE_TASKS['SST-2'], model, padId: fixtureVocab.special.pad, vocabPath: fixtureVocab.info.path, train: feats, dev: feats}),
    c,
    {resume: null, stopAt: null},
    {out: writer, log: () => {}, progress: quietProgress, scalars, onStep: () => counts.push(tf.memory().numTensors)},
  )
  await scalars.close()
  await writer.end()
  model.dispose()
  return {r, recs: records(), out, counts}
}

beforeAll(async () => {
  await initBackend('cpu')
})

describe('the fine-tuning loop', () => {
  it('--patience stops after N evaluations without a better score (lr 0: the score never moves)', async () => {
    const {r, recs} = await run({lr: 0, 'eval-every': 1, patience: 2, epochs: 5})
    expect(r.stopped).toBe('patience')
    const dev = recs.filter((x) => x.split === 'dev')
    expect(dev.map((d) => d.best)).toEqual([true, false, false])
    expect(r.step).toBe(3)
  })

  it('--max-train-examples, --eval-every and --keep: steps, evaluations and the directories left', async () => {
    const before = tf.memory().numTensors
    const {r, recs, out, counts} = await run({'max-train-examples': 6, 'eval-every': 2, keep: 2, epochs: 2})
    expect(tf.memory().numTensors).toBe(before) // no tensor left by training, scoring or saving
    expect(new Set(counts).size).toBe(1) // and none accumulating from step to step
    expect(r).toMatchObject({stopped: 'done', step: 6}) // 6 examples / batch 2 = 3 steps per epoch
    expect(recs.filter((x) => x.split === 'dev').map((d) => d.step)).toEqual([2, 3, 4, 6])
    expect(readdirSync(out).sort()).toEqual(['best', 'checkpoint-4', 'checkpoint-6', 'span-run.json']) // span-run.json: the run's own checkpoints
  })

  it('--tensorboard: losses, learning rate, gradient norm and dev metrics as scalars, read back with every CRC checked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ft-tb-'))
    const {recs} = await run({epochs: 1}, dir)
    const files = readdirSync(dir).filter((f) => f.startsWith('events.out.tfevents.'))
    expect(files).toHaveLength(1)
    const events = await readEvents(join(dir, files[0]))
    const scalars = events.flatMap((e) => e.scalars.map(({tag, value}) => ({tag, v: value, step: e.step})))
    const tags = new Set(scalars.map((x) => x.tag))
    for (const t of ['train/loss', 'train/lr', 'train/grad_norm', 'dev/acc', 'dev/score']) expect(tags.has(t), t).toBe(true)
    const train = recs.filter((x) => x.loss !== undefined && !x.split)
    expect(scalars.filter((x) => x.tag === 'train/loss').map((x) => x.step)).toEqual(train.map((x) => x.step))
    for (const [i, x] of scalars.filter((x) => x.tag === 'train/loss').entries()) expect(x.v).toBeCloseTo(train[i].loss as number, 5) // float32 in the file
  })

  it('--group-by-length: a seeded order of the same units, batches of similar length, the same for the same seed and epoch', () => {
    const lengths = Array.from({length: 300}, (_, i) => 5 + ((i * 37) % 50))
    const a = epochOrder(300, 7, 2, (i) => lengths[i], 2)
    expect(Array.from(a)).toEqual(Array.from(epochOrder(300, 7, 2, (i) => lengths[i], 2)))
    expect(Array.from(a)).not.toEqual(Array.from(epochOrder(300, 7, 3, (i) => lengths[i], 2)))
    expect([...a].sort((x, y) => x - y)).toEqual(Array.from({length: 300}, (_, i) => i))
    const spread = (o: Uint32Array) => {
      let s = 0
      for (let k = 0; k < o.length; k += 2) s += Math.abs(lengths[o[k]] - lengths[o[k + 1]])
      return s
    }
    expect(spread(a)).toBeLessThan(spread(epochOrder(300, 7, 2, null, 2)) / 5)
  })
})
