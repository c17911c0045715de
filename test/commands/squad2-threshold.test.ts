// SQuAD 2.0 as SpanBERT's run_squad does it (dist/ must be built): fine-tuning keeps the best
// checkpoint by best_f1 and stores its best_f1_thresh; `predict squad` applies that threshold by
// default, and its predictions then score what `eval squad --na-prob` calls best_f1.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {loadNative} from '../../src/core/engine/native.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const DATA = join(root, '..', 'shared', 'data', 'squad', 'squad-v2.0-dev-subset-normans-rhine.json')
const tmp = mkdtempSync(join(tmpdir(), 'span-squad2-'))
const ckpt = join(tmp, 'pre')
const backend = loadNative().available ? 'native' : 'wasm'
const windows = ['--max-len', '256', '--doc-stride', '128', '--max-query-len', '24', '--batch-size', '32', '--backend', backend]

function span(args: string[]) {
  const r = spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe.skipIf(!existsSync(DATA))('SQuAD 2.0: the tuned null threshold (needs ../shared/data/squad)', () => {
  beforeAll(async () => {
    await initBackend('cpu')
    const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 256}), 3)
    await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
    model.dispose()
  })

  it("predict with the stored best_f1_thresh reproduces eval --na-prob's best_f1", () => {
    const out = join(tmp, 'run')
    const ft = span([
      'finetune',
      'squad',
      '--init',
      ckpt,
      '--train',
      DATA,
      '--dev',
      DATA,
      '--out',
      out,
      '--epochs',
      '1',
      '--max-train-examples',
      '32',
      ...windows,
    ])
    expect(ft.code, ft.stderr).toBe(0)
    const dev = ft.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((r) => r.split === 'dev')
    expect(Object.keys(dev)).toEqual(expect.arrayContaining(['exact', 'f1', 'best_f1', 'best_f1_thresh', 'HasAns_f1', 'NoAns_f1']))
    const saved = JSON.parse(readFileSync(join(out, 'best', 'finetune_config.json'), 'utf8'))
    expect(saved.dev_scores.best_f1_thresh).toBe(dev.best_f1_thresh)

    const tuned = join(tmp, 'tuned')
    const all = join(tmp, 'all')
    expect(span(['predict', 'squad', '--model', out, '--data', DATA, '-o', tuned, ...windows]).code).toBe(0)
    expect(span(['predict', 'squad', '--model', out, '--data', DATA, '-o', all, '--null-threshold', '1e30', ...windows]).code).toBe(0)
    const evalJson = (args: string[]) => {
      const r = span(['eval', 'squad', '--data', DATA, '--json', ...args])
      expect(r.code, r.stderr).toBe(0)
      return JSON.parse(r.stdout) as Record<string, number>
    }
    const withOdds = evalJson(['--pred', join(all, 'predictions.json'), '--na-prob', join(all, 'null_odds.json')])
    const applied = evalJson(['--pred', join(tuned, 'predictions.json')])
    expect(withOdds.best_f1).toBeCloseTo(dev.best_f1, 6)
    expect(applied.f1).toBeCloseTo(withOdds.best_f1, 6)
    // the stored threshold is the scorer's, unless (a model that answers nothing right) the scorer's
    // 0.0 would not realise its best_f1: then one below every null odds
    const odds = Object.values(JSON.parse(readFileSync(join(all, 'null_odds.json'), 'utf8'))) as number[]
    const t = saved.dev_scores.best_f1_thresh
    expect(t === withOdds.best_f1_thresh || t < Math.min(...odds)).toBe(true)
  }, 400_000) // 706 questions predicted three times
})
