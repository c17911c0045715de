// A run saved at bf16 (its resolved config records the precision that ran, say on a GPU) and resumed
// on native on a CPU without bf16 dot products (SPAN_CPU_FLAGS pretends one), through `bin/run.js`
// (dist/ must be built): a precision (or device) the user did not type for the resumed run is
// re-resolved for its backend, with a one-line notice, and the run continues at fp32; one typed for
// it stays the usage error it is on a new run (backend-precision.ts cpuPrecision). On a CPU with
// them the run continues at bf16: test/core/engine/native-bf16-process.test.ts.
import {createHash} from 'node:crypto'
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {runSpan} from './helpers/spawn.js'

const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--log-every', '1']
const NOTICE =
  'span: the resumed run ran at --precision bf16; --backend native computes in fp32 only on this CPU (no bf16 dot products): the run continues at fp32\n'
const REFUSED =
  '--precision bf16 needs --backend cuda, or native on a CPU with bf16 dot products; --backend native computes in fp32 only on this CPU (no bf16 dot products): see span doctor\n'
const env = {...process.env, SPAN_CPU_FLAGS: 'avx2 fma'}

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

/** The newest checkpoint-STEP/ of a run, its saved config `file` rewritten as a GPU run at bf16 would have saved it. */
function asIfBf16(out: string, file: string): string {
  const step = readdirSync(out)
    .filter((d) => d.startsWith('checkpoint-'))
    .sort()
    .at(-1)!
  const path = join(out, step, file)
  const text = readFileSync(path, 'utf8')
  expect((JSON.parse(text) as {precision: string}).precision).toBe('fp32')
  const edited = text.replace(/("precision": ?)"fp32"/, '$1"bf16"')
  writeFileSync(path, edited)
  const manifest = join(out, step, 'span-manifest.json') // a pretrain checkpoint lists its files' SHA-256
  if (existsSync(manifest)) {
    const m = JSON.parse(readFileSync(manifest, 'utf8')) as {files: Record<string, {size: number; sha256: string}>}
    m.files[file] = {size: Buffer.byteLength(edited), sha256: createHash('sha256').update(edited).digest('hex')}
    writeFileSync(manifest, JSON.stringify(m, null, 2) + '\n')
  }
  return join(out, step)
}

describe('a bf16 run resumed on --backend native', () => {
  it('pretrain: an inherited bf16 continues at fp32 with a notice; a typed one is a usage error', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'span-resume-precision-')), 'p')
    const data = join(out, '..', 'masked.ndjson')
    writeFileSync(data, masked())
    const first = runSpan(['pretrain', data, ...TINY, '--max-steps', '2', '--stop-at', '1', '--save-every', '1', '--backend', 'native', '--out', out])
    expect(first.code, first.stderr).toBe(0)
    const ckpt = asIfBf16(out, 'train_config.json')
    const typed = runSpan(['pretrain', '--resume', ckpt, '--backend', 'native', '--precision', 'bf16'], {env})
    expect([typed.code, typed.stderr]).toEqual([2, `span pretrain: ${REFUSED}`])
    const resumed = runSpan(['pretrain', '--resume', ckpt, '--backend', 'native'], {env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr.split('\n').filter((l) => l.startsWith('span: '))).toEqual([NOTICE.trimEnd()])
    const again = JSON.parse(readFileSync(join(out, 'checkpoint-2', 'train_config.json'), 'utf8')) as {precision: string}
    expect(again.precision).toBe('fp32') // the config saved says what ran
  })

  it('finetune squad: the same', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'span-resume-precision-')), 'f')
    const squad = [
      'finetune',
      'squad',
      '--preset',
      'tiny',
      '--train',
      'fixtures/squad-demo/train.json',
      '--max-len',
      '32',
      '--doc-stride',
      '8',
      '--max-query-len',
      '8',
    ]
    const first = runSpan([...squad, '--max-train-examples', '4', '--batch-size', '2', '--epochs', '1', '--stop-at', '1', '--backend', 'native', '--out', out])
    expect(first.code, first.stderr).toBe(0)
    const ckpt = asIfBf16(out, 'finetune_config.json')
    const typed = runSpan(['finetune', 'squad', '--resume', ckpt, '--backend', 'native', '--precision', 'bf16'], {env})
    expect([typed.code, typed.stderr]).toEqual([2, `span finetune squad: ${REFUSED}`])
    const resumed = runSpan(['finetune', 'squad', '--resume', ckpt, '--backend', 'native'], {env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stderr.split('\n').filter((l) => l.startsWith('span: '))).toEqual([NOTICE.trimEnd()])
    expect(existsSync(join(out, 'checkpoint-2'))).toBe(true)
  })
})
