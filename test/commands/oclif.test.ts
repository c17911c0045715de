// The commands run in-process through oclif (flag parsing, dispatch, error handling), with
// stdout and stderr captured separately. Spawned-process and pipe tests live in test/pipes/.
import {runCommand} from '@oclif/test'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

const root = join(__dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'span-oclif-'))
const run = (args: string[]) => runCommand(args, {root})

afterEach(() => {
  process.exitCode = undefined // a failing command sets it; the test runner must not inherit it
})

describe('span vocab (in-process)', () => {
  it('writes special tokens first and a summary on stderr only', async () => {
    const corpus = join(tmp, 'corpus.txt')
    writeFileSync(corpus, 'the cat sat on the mat\nthe dog sat on the log\n\nthe cat and the dog\n')
    const {stdout, stderr, error} = await run(['vocab', '--size', '30', '--min-frequency', '1', corpus])
    expect(error).toBeUndefined()
    const lines = stdout.trimEnd().split('\n')
    expect(lines.slice(0, 5)).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'])
    expect(lines).toHaveLength(30)
    expect(stderr).toMatch(/^span vocab: \d+ distinct words, 30 entries\n$/)
  })

  it('writes -o files whole, and lowercases with --uncased', async () => {
    const corpus = join(tmp, 'upper.txt')
    writeFileSync(corpus, 'The Cat SAT\n')
    const out = join(tmp, 'vocab.txt')
    const {stdout} = await run(['vocab', '--uncased', '--min-frequency', '1', '--size', '100', '-o', out, corpus])
    expect(stdout).toBe('')
    const vocab = readFileSync(out, 'utf8')
    expect(vocab).toContain('\ncat\n')
    const words = vocab.trimEnd().split('\n').slice(5)
    expect(words.filter((t) => t !== t.toLowerCase())).toEqual([])
  })

  it('refuses an input without words', async () => {
    const empty = join(tmp, 'empty.txt')
    writeFileSync(empty, '\n\n')
    const {stdout, stderr} = await run(['vocab', empty])
    expect(stdout).toBe('')
    expect(stderr).toBe(`span vocab: ${empty}: no words to learn a vocabulary from\n`)
    expect(process.exitCode).toBe(1)
  })
})

describe('span block (in-process)', () => {
  const header = {span: 'header', kind: 'tokens', special: {pad: 0, unk: 1, cls: 2, sep: 3, mask: 4}, history: []}

  it('packs lines into blocks and records itself in the header', async () => {
    const file = join(tmp, 'tokens.ndjson')
    const recs = [header, {doc: 0, ids: [5, 6, 7]}, {doc: 0, ids: [8, 9]}, {doc: 1, ids: [10]}]
    writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n')
    const {stdout, stderr} = await run(['block', '--len', '6', file])
    expect(stderr).toBe('')
    const out = stdout.trimEnd().split('\n').map((l) => JSON.parse(l))
    expect(out[0].kind).toBe('blocks')
    expect(out[0].history).toEqual([{stage: 'block', version: '0.1.0', flags: {len: 6}}])
    expect(out.slice(1)).toEqual([
      {doc: 0, ids: [2, 5, 6, 7, 3]},
      {doc: 0, ids: [2, 8, 9, 3]},
      {doc: 1, ids: [2, 10, 3]},
    ])
  })

  it('names a missing input file in one line', async () => {
    const {stdout, stderr} = await run(['block', join(tmp, 'nope.ndjson')])
    expect(stdout).toBe('')
    expect(stderr).toBe(`span block: ${join(tmp, 'nope.ndjson')}: no such file\n`)
    expect(process.exitCode).toBe(1)
  })

  it('rejects a bad flag value through oclif', async () => {
    const {stderr} = await run(['block', '--len', '2'])
    expect(stderr).toMatch(/^span block: --len: expected an integer ≥ 3, got 2 \(--len N: .*\)\n$/) // one line, a usage error
    expect(process.exitCode).toBe(2)
  })
})
