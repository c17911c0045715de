// `span pretrain --init`: continued pre-training from a pytorch_model.bin written by PyTorch
// (fixtures/torch/, tools/make-torch-fixtures.py). dist/ must be built.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {type MaskedExample, collate, disposeBatch, toTensors} from '../../src/core/model/batch.js'
import {loadCheckpoint} from '../../src/core/model/checkpoint.js'
import {EVAL} from '../../src/core/model/layers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const torch = join(root, 'fixtures', 'torch')
const tmp = mkdtempSync(join(tmpdir(), 'span-pretrain-init-'))
const data = join(tmp, 'masked.ndjson')

// [CLS]=2 [SEP]=3 [MASK]=4 in fixtures/torch/vocab.txt; spans away from the edges so SBO has targets
const EXAMPLES: MaskedExample[] = [
  {
    ids: [2, 5, 4, 4, 9, 40, 6, 98, 3],
    targets: [
      [2, 17],
      [3, 30],
    ],
    spans: [[2, 3, 'mask']],
  },
  {ids: [2, 30, 11, 73, 4, 61, 24, 88, 50, 3], targets: [[4, 12]], spans: [[4, 4, 'mask']]},
  {
    ids: [2, 7, 8, 4, 4, 4, 10, 3],
    targets: [
      [3, 44],
      [4, 45],
      [5, 46],
    ],
    spans: [[3, 5, 'mask']],
  },
]

function span(args: string[]) {
  const r = spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

beforeAll(async () => {
  writeFileSync(data, EXAMPLES.map((e) => JSON.stringify(e)).join('\n') + '\n')
  await initBackend('cpu')
})

describe('span pretrain --init', () => {
  it.each(['zip-f32', 'gamma-bare'])("from %s: the first step's MLM loss is the loaded model's MLM loss on that batch", async (name) => {
    const dir = join(torch, name)
    const vocab = name === 'gamma-bare' ? ['--vocab', join(torch, 'vocab.txt')] : []
    const r = span([
      'pretrain',
      data,
      '--init',
      dir,
      ...vocab,
      '--out',
      join(tmp, name),
      '--batch-size',
      '3',
      '--max-steps',
      '1',
      '--log-every',
      '1',
      '--backend',
      'cpu',
      '--lr',
      '1e-3',
    ])
    expect(r.code, r.stderr).toBe(0)
    const first = JSON.parse(r.stdout.split('\n')[0]) as {step: number; mlm_loss: number}
    expect(first.step).toBe(1)
    const {model} = await loadCheckpoint(dir, {vocab: join(torch, 'vocab.txt')})
    const host = collate(EXAMPLES, {padId: 0, maxTargets: 4, maxPositions: 40})
    const b = toTensors(host)
    const mlm = tf.tidy(() => model.losses(b, EVAL).mlm.dataSync()[0])
    disposeBatch(b)
    model.dispose()
    if (name === 'gamma-bare') {
      // a bare BertModel has no MLM head: it is initialised, and stderr says so
      expect(r.stderr).toMatch(/initialised \d+ \(cls\.predictions\.\* ×\d+, cls\.pair_target_predictions\.\* ×\d+\)/)
      return
    }
    expect(first.mlm_loss).toBeCloseTo(mlm, 4)
    expect(r.stderr).toMatch(
      /--init .*zip-f32: took 44 tensors \(bert\.embeddings\.\* ×5, bert\.encoder\.\* ×32, bert\.pooler\.\* ×2, cls\.predictions\.\* ×5\)/,
    )
    expect(r.stderr).toMatch(/initialised 10 \(cls\.pair_target_predictions\.\* ×10\); ignored 4 \(cls\.predictions\.\* ×2, cls\.seq_relationship\.\* ×2\)/)
  })

  it('--resume and --init together: a usage error', () => {
    const r = span(['pretrain', data, '--init', join(torch, 'zip-f32'), '--resume', tmp, '--out', join(tmp, 'x')])
    expect(r.code).toBe(2)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })
})
