// `span finetune squad` as a user runs it (dist/ must be built): a few steps on a handful of
// questions, the checkpoint's files and keys, and bad input that leaves nothing behind.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {runSpan} from '../helpers/spawn.js'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {readSafetensors} from '../../src/core/model/safetensors.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'
import {qas, squad} from './squad-fixture.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-finetune-squad-'))
const ckpt = join(tmp, 'pre')
const train = join(tmp, 'train.json')
const small = ['--max-len', '32', '--doc-stride', '8', '--max-query-len', '8', '--batch-size', '4', '--backend', 'wasm']

function span(args: string[]) {
  return runSpan(['finetune', 'squad', ...args])
}
const records = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>)

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  writeFileSync(train, squad(qas))
})

describe('span finetune squad', () => {
  it('trains from a pre-training checkpoint and keeps the best dev checkpoint, with its run config', async () => {
    const out = join(tmp, 'ft')
    const r = span(['--init', ckpt, '--train', train, '--dev', train, '--out', out, '--epochs', '2', '--lr', '1e-3', '--log-every', '1', ...small])
    expect(r.stderr).toContain('initialised qa_outputs.weight, qa_outputs.bias')
    expect(r.code).toBe(0)
    const recs = records(r.stdout)
    const steps = recs.filter((x) => !('split' in x) && !('checkpoint' in x))
    expect(steps.length).toBeGreaterThanOrEqual(2)
    for (const s of steps) expect(Object.keys(s).sort()).toEqual(['epoch', 'grad_norm', 'loss', 'lr', 'step', 'tokens_per_s'])
    const dev = recs.filter((x) => x.split === 'dev')
    expect(dev.map((d) => d.epoch)).toEqual([1, 2])
    for (const d of dev) expect(Object.keys(d).sort()).toEqual(['best', 'epoch', 'exact', 'f1', 'split', 'step'])
    expect(dev[0].best).toBe(true)
    const best = join(out, 'best')
    const saved = JSON.parse(readFileSync(join(best, 'finetune_config.json'), 'utf8'))
    const bestDev = dev.filter((d) => d.best).at(-1) as Record<string, number>
    expect(saved).toMatchObject({task: 'squad', version: '1.1', 'max-len': 32, epoch: bestDev.epoch, dev_scores: {f1: bestDev.f1}})
    expect(saved.cased).toBe(fixtureVocab.cased)
    expect(JSON.parse(readFileSync(join(best, 'tokenizer_config.json'), 'utf8')).do_lower_case).toBe(!fixtureVocab.cased)
    expect(JSON.parse(readFileSync(join(best, 'config.json'), 'utf8')).architectures).toEqual(['BertForQuestionAnswering'])
    expect(readFileSync(join(best, 'vocab.txt'), 'utf8')).toBe(readFileSync(fixtureVocab.info.path, 'utf8'))
    const weights = (await readSafetensors(join(best, 'model.safetensors'))).tensors
    expect(weights.get('qa_outputs.weight')?.shape).toEqual([2, 16])
    expect(weights.has('cls.predictions.bias')).toBe(false)
  })

  it('starts from a random --preset model; v2.0 questions without answers train on [CLS]', () => {
    const v2 = join(tmp, 'v2.json')
    writeFileSync(v2, squad([...qas, {id: 'q4', question: 'Who flew?', answers: [], is_impossible: true}], 'v2.0'))
    const out = join(tmp, 'ft-v2')
    const r = span(['--preset', 'tiny', '--train', v2, '--out', out, '--epochs', '1', ...small])
    expect(r.code).toBe(0)
    const last = records(r.stdout).filter((x) => !('checkpoint' in x)).at(-1) as Record<string, number>
    expect(last.epoch).toBe(1)
    expect(r.stderr).toMatch(/4 questions, \d+ windows/)
    expect(r.stderr).toMatch(new RegExp(`\\d+ training units; ${last.step} steps per epoch`))
    expect(JSON.parse(readFileSync(join(out, 'best', 'finetune_config.json'), 'utf8'))).toMatchObject({version: '2.0', init: 'preset:tiny'})
  })

  const bad: [string, string, RegExp][] = [
    ['malformed JSON', '{"version": "1.1", "data": [', /bad\.json:1: invalid JSON/],
    ['an answer not at its offset', squad([{id: 'q9', question: 'What?', answers: [{text: 'the boat', answer_start: 3}]}]), /question q9: answer 0 "the boat" is not at answer_start 3/],
    ['an empty file', '', /empty file/],
    ['not SQuAD', '{"data": [{"paragraphs": [{"qas": []}]}]}', /not a SQuAD dataset: data\[0\]\.paragraphs\[0\] has no "context"/],
  ]
  for (const [what, text, message] of bad) {
    it(`${what}: one line on stderr, non-zero exit, no output directory`, () => {
      const file = join(tmp, 'bad.json')
      writeFileSync(file, text)
      const out = join(tmp, `never-${what.replaceAll(' ', '-')}`)
      const r = span(['--init', ckpt, '--train', file, '--out', out, ...small])
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
      expect(r.stdout).toBe('')
      expect(existsSync(out)).toBe(false)
    })
  }

  it('--init that is not a checkpoint is a clear error', () => {
    const notCkpt = join(tmp, 'empty-dir')
    mkdirSync(notCkpt, {recursive: true})
    const r = span(['--init', notCkpt, '--train', train, '--out', join(tmp, 'never'), ...small])
    expect(r.code).not.toBe(0)
    expect(r.stderr.trim()).toBe(`span finetune squad: ${notCkpt}: not a checkpoint directory (no config.json)`)
  })
})
