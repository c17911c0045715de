// `finetune squad --init` and `finetune glue --init` from pytorch_model.bin directories written by
// PyTorch (fixtures/torch/, tools/make-torch-fixtures.py). dist/ must be built.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {qas, squad} from './squad-fixture.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const torch = join(root, 'fixtures', 'torch')
const tmp = mkdtempSync(join(tmpdir(), 'span-ft-torch-'))

function span(args: string[]) {
  const r = spawnSync('node', [bin, ...args], {cwd: root, encoding: 'utf8', maxBuffer: 1 << 26})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

describe('fine-tuning from pytorch_model.bin', () => {
  it('finetune squad --init a legacy-format checkpoint runs and writes its checkpoint', () => {
    const train = join(tmp, 'train.json')
    writeFileSync(train, squad(qas))
    const out = join(tmp, 'squad')
    const r = span([
      'finetune',
      'squad',
      '--init',
      join(torch, 'legacy-f32'),
      '--train',
      train,
      '--out',
      out,
      '--epochs',
      '1',
      '--max-len',
      '32',
      '--doc-stride',
      '8',
      '--max-query-len',
      '8',
      '--batch-size',
      '4',
      '--backend',
      'wasm',
    ])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toMatch(/initialised qa_outputs\.weight, qa_outputs\.bias/)
    expect(existsSync(join(out, 'best', 'model.safetensors'))).toBe(true) // a run directory: best/ and checkpoint-STEP/
  })

  it('finetune glue --init a bare gamma/beta checkpoint without vocab.txt runs with --vocab', () => {
    const train = join(tmp, 'train.tsv')
    const rows = [
      'Quality\t#1 ID\t#2 ID\t#1 String\t#2 String',
      '1\t1\t2\the was the first man .\the was the first man .',
      '0\t3\t4\tshe had been there .\tthey were not in it .',
      '1\t5\t6\twe can do it now .\twe can do it now .',
      '0\t7\t8\tmy man .\tour time .',
    ]
    writeFileSync(train, rows.join('\n') + '\n')
    const args = [
      'finetune',
      'glue',
      '--task',
      'mrpc',
      '--init',
      join(torch, 'gamma-bare'),
      '--train',
      train,
      '--out',
      join(tmp, 'glue'),
      '--max-len',
      '32',
      '--batch-size',
      '4',
      '--epochs',
      '1',
      '--backend',
      'wasm',
    ]
    const missing = span(args)
    expect(missing.code).toBe(1) // a file the checkpoint lacks: a data error (issue 25 cause 9)
    expect(missing.stderr.trim()).toMatch(/^span finetune glue: .*gamma-bare: no vocab.txt; give the model's vocabulary with --vocab FILE/)
    const r = span([...args, '--vocab', join(torch, 'vocab.txt')])
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(join(tmp, 'glue', 'best', 'model.safetensors'))).toBe(true)
  })
})
