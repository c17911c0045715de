// `span fill` as a user runs it (dist/ must be built): a model that memorised a text, trained
// in-process (test/core/model/fill.test.ts), then saved; and checkpoints without the heads.
import {spawnSync} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {memorised, vocabPath} from '../core/model/fill-helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-fill-cmd-'))
const ckpt = join(tmp, 'ckpt')

function span(args: string[], input: string) {
  const r = spawnSync('node', [bin, 'fill', '--backend', 'native', ...args], {cwd: root, input, encoding: 'utf8'})
  return {code: r.status, stdout: r.stdout, stderr: r.stderr}
}

beforeAll(async () => {
  await initBackend('native')
  const model = memorised()
  await saveCheckpoint(ckpt, model, vocabPath)
  model.dispose()
}, 300_000)

describe('span fill', () => {
  it('NDJSON: the memorised span comes back first; --field reads JSONL', () => {
    const text = 'the old man walked to the [MASK] [MASK] the morning'
    const r = span(['--model', ckpt, '--k', '2'], `${text}\n\nthe [MASK] man\n`)
    expect(r.code, r.stderr).toBe(0)
    const recs = r.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(recs).toHaveLength(2)
    expect(recs[0].text).toBe(text)
    expect(recs[0].spans[0]).toMatchObject({start: 26, end: 39})
    expect(recs[0].spans[0].fills).toHaveLength(2)
    expect(recs[0].spans[0].fills[0].text).toBe('river in')
    expect(recs[1].spans[0].fills[0].text).toBe('old')
    const j = span(
      ['--model', ckpt, '--field', 'q', '--head', 'sbo', '--k', '1'],
      '{"q": "the old man walked to the river in the morning and saw a [MASK] boat"}\n',
    )
    expect(JSON.parse(j.stdout).spans[0].fills[0].text).toBe('small')
  })

  it('bad input: one line, non-zero exit', () => {
    const fails = (args: string[], input: string, message: RegExp, code = 1) => {
      const r = span(args, input)
      expect(r.code).toBe(code)
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    }
    fails(['--model', ckpt], 'the old man\n', /^span fill: stdin:1: no \[MASK\] in the text/)
    fails(['--model', ckpt], `${'the '.repeat(30)}[MASK]\n`, /^span fill: stdin:1: 33 tokens with \[CLS\] and \[SEP\], longer than the model's 24 positions/)
    fails(
      ['--model', ckpt, '--head', 'sbo'],
      'the [MASK] [MASK] [MASK] [MASK] [MASK] man\n',
      /a run of 5 \[MASK\]s is longer than the SBO head predicts \(max_targets 4\)/,
    )
    // a BERT checkpoint (PyTorch-written) has an MLM head but no SBO head
    const bert = join(root, 'fixtures', 'torch', 'zip-f32')
    fails(['--model', bert], 'the [MASK] man\n', /zip-f32: the checkpoint has no span boundary head .*; --head both needs it \(try --head mlm\)/)
    const ok = span(['--model', bert, '--head', 'mlm', '--k', '1'], 'the [MASK] man\n')
    expect(ok.code, ok.stderr).toBe(0)
    fails(
      ['--model', join(root, 'fixtures', 'torch', 'gamma-bare'), '--vocab', join(root, 'fixtures', 'torch', 'vocab.txt'), '--head', 'mlm'],
      'the [MASK] man\n',
      /the checkpoint has no MLM head/,
    )
  })
})
