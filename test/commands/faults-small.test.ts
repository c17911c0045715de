// The smaller items of issue 13, each reproduced first: bad input once accepted with exit 0
// (special ids outside the vocabulary, an unknown SQuAD version), raw Node errors now in one
// line and before the work (--hidden 1e9, --tmp-dir, --vocab DIR), a relative vocabulary path
// found from another directory, and `segment-ngrams --build | head -1` reporting what it kept.
import {copyFileSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {shellAsync} from '../helpers/spawn.js'
import {parseSquad} from '../../src/core/tasks/squad/dataset.js'
import {DEFAULT_VOCAB} from '../../src/core/text/vocab.js'
import {header, writeBlocks} from '../core/train/helpers.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-small-'))

const sh = (line: string, cwd = tmp) => shellAsync(line, cwd)
const span = (args: string) => `node ${bin} ${args}`
const oneLine = (r: {stderr: string}, cmd: string, re: RegExp) => {
  const lines = r.stderr.split('\n').filter((l) => l !== '' && !/: (config|model): |^pretrain: /.test(l))
  expect(lines).toHaveLength(1)
  expect(lines[0].startsWith(`span ${cmd}: `)).toBe(true)
  expect(lines[0]).toMatch(re)
}

beforeAll(() => {
  writeFileSync(join(tmp, 'text.txt'), Array.from({length: 400}, (_, i) => `the quick brown fox ${i % 7} jumps over the lazy dog.`).join('\n') + '\n')
  writeBlocks(join(tmp, 'blocks.ndjson'), 20, 1)
  let x = 7
  const word = () => `w${((x = (x * 1103515245 + 12345) % 2 ** 31) >>> 8) % 200}`
  writeFileSync(join(tmp, 'many.txt'), Array.from({length: 3000}, () => Array.from({length: 12}, word).join(' ')).join('\n') + '\n')
})

describe('issue 13, the small items', () => {
  it('refuses in one line what it used to accept or crash on', async () => {
    const h = JSON.parse(header('tokens'))
    writeFileSync(join(tmp, 'badspecial.ndjson'), JSON.stringify({...h, special: {...h.special, sep: 99999}}) + '\n{"doc":0,"ids":[7,8]}\n')
    const [special, hidden, tmpDir, vocabDir] = await Promise.all([
      sh(span('block badspecial.ndjson --len 8')),
      sh(span('pretrain blocks.ndjson --preset tiny --hidden 1000000000 --heads 1 --backend wasm --out huge')),
      sh(span('segment-ngrams --build text.txt --tmp-dir /proc/span-none')),
      sh(span(`tokenize text.txt --vocab ${tmp}`)),
    ])
    oneLine(special, 'block', /badspecial\.ndjson:1: bad header record: special\.sep = 99999 is outside the vocabulary \(size \d+\)/)
    expect(special.code).toBe(1)
    oneLine(hidden, 'pretrain', /the model: .* (more than one tensor can hold|GB for weights, gradients and AdamW moments)/)
    expect(hidden.code).toBe(1)
    oneLine(tmpDir, 'segment-ngrams', /--tmp-dir \/proc\/span-none: no such file or directory \(ENOENT\)/)
    expect(tmpDir.code).toBe(1)
    oneLine(vocabDir, 'tokenize', /: is a directory \(EISDIR\); give the vocabulary file/)
    expect(vocabDir.code).toBe(1)
    const squad = {
      version: 'v9.9',
      data: [{title: 't', paragraphs: [{context: 'a b', qas: [{id: '1', question: 'q', answers: [{text: 'a', answer_start: 0}]}]}]}],
    }
    expect(() => parseSquad(squad, 'x.json')).toThrow(/^x\.json: "version" is "v9\.9"; span reads SQuAD v1\.1 and v2\.0 only$/)
    expect(parseSquad({...squad, version: 'v2.0'}, 'x.json').version).toBe('2.0')
  })

  it('a relative --vocab: the header records it absolute; a moved stream finds it beside itself by SHA-256', async () => {
    mkdirSync(join(tmp, 'a'))
    copyFileSync(DEFAULT_VOCAB, join(tmp, 'a', 'myvocab.txt'))
    expect((await sh(`${span('tokenize ../text.txt --vocab myvocab.txt')} | ${span('block --len 32')} > blocks2.ndjson`, join(tmp, 'a'))).code).toBe(0)
    mkdirSync(join(tmp, 'b'))
    const m = await sh(span('mask ../a/blocks2.ndjson --unigram-prefix 0'), join(tmp, 'b'))
    expect(m.stderr).toBe('')
    expect(m.code).toBe(0)
    expect(JSON.parse(m.stdout.split('\n')[0]).vocab.path).toBe(join(tmp, 'a', 'myvocab.txt'))
    // the stream and its vocabulary moved together: found beside the stream, matched by SHA-256
    mkdirSync(join(tmp, 'c'))
    copyFileSync(join(tmp, 'a', 'blocks2.ndjson'), join(tmp, 'c', 'blocks2.ndjson'))
    copyFileSync(join(tmp, 'a', 'myvocab.txt'), join(tmp, 'c', 'myvocab.txt'))
    await sh('rm -r a')
    expect((await sh(span('mask c/blocks2.ndjson --unigram-prefix 0 -o /dev/null'))).code).toBe(0)
    writeFileSync(join(tmp, 'c', 'myvocab.txt'), '[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nother\n')
    const changed = await sh(span('mask c/blocks2.ndjson -o /dev/null'))
    oneLine(changed, 'mask', /myvocab\.txt: vocabulary file not found, and .*c\/myvocab\.txt has another SHA-256 than the header's: give --vocab FILE/)
  })

  it('`segment-ngrams --build | head -1` reports the n-grams it kept, not 0', async () => {
    const r = await sh(`${span('segment-ngrams --build many.txt --min-count 2')} | head -1`)
    expect(r.code).toBe(0)
    const kept = Number(/, (\d+) kept \(count ≥ 2\)/.exec(r.stderr)?.[1])
    expect(kept).toBeGreaterThan(5000) // a dictionary far larger than the pipe's buffer: head closed it early
    const whole = await sh(span('segment-ngrams --build many.txt --min-count 2 -o /dev/null'))
    expect(whole.stderr).toContain(`, ${kept} kept`)
  })
})
