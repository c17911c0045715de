// `span mask` as a user runs it: node bin/run.js processes (dist/ must be built), stdout and stderr apart.
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {maskBudget} from '../../src/core/data/mask.js'
import {VOCAB_PATH, describeData, vocab, wikiRecords} from '../core/data/helpers.js'
import {runShell, runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-mask-'))
const tokens = join(dir, 'tokens.ndjson')
const blocks = join(dir, 'blocks.ndjson')
const {cls, sep} = vocab.special

function span(args: string[], input?: string | Buffer) {
  return runSpan(args, {input})
}

function sh(script: string) {
  return runShell(script)
}

const parse = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l))
const tokenHeader = (patch: object = {}) =>
  JSON.stringify({span: 'header', kind: 'tokens', vocab: vocab.info, cased: true, special: vocab.special, history: [{stage: 'tokenize', version: '0.1.0', flags: {}}], ...patch})
const blockHeader = (patch: object = {}) => tokenHeader({kind: 'blocks', ...patch})

beforeAll(() => {
  writeFileSync(tokens, [tokenHeader(), ...wikiRecords().map((r) => JSON.stringify(r))].join('\n') + '\n')
  const r = span(['block', '--len', '256', tokens])
  expect(r.stderr).toBe('')
  writeFileSync(blocks, r.stdout)
})

describeData('span mask', () => {
  for (const scheme of ['span', 'subword', 'whole-word']) {
    it(`--scheme ${scheme}: exactly ceil(0.15·n) targets per block, header appended`, () => {
      const r = span(['mask', '--scheme', scheme, '--seed', '3', blocks])
      expect(r.stderr).toBe('')
      expect(r.code).toBe(0)
      const [header, ...recs] = parse(r.stdout)
      const input = parse(readFileSync(blocks, 'utf8')).slice(1)
      expect(header.kind).toBe('masked')
      expect(header.history.map((h: {stage: string}) => h.stage)).toEqual(['tokenize', 'block', 'mask'])
      expect(header.history[2].flags).toMatchObject({scheme, p: 0.2, maxSpan: 10, ratio: 0.15, seed: 3})
      expect(recs.length).toBe(input.length)
      recs.forEach((rec, i) => {
        expect(rec.doc).toBe(input[i].doc)
        expect(rec.targets.length).toBe(maskBudget(input[i].ids.length - 2, 0.15))
        for (const [pos, id] of rec.targets) expect(input[i].ids[pos]).toBe(id)
      })
    })
  }

  it('gives byte-identical output for a seed, and another for another seed', () => {
    const a = span(['mask', '--seed', '7', blocks]).stdout
    expect(span(['mask', '--seed', '7', '-i', blocks]).stdout).toBe(a)
    expect(span(['mask', '--seed', '8', blocks]).stdout).not.toBe(a)
  })

  it('keeps segments and next of pair blocks and never masks their [SEP]s', () => {
    const pairs = span(['block', '--pairs', '--len', '128', tokens]).stdout
    const r = span(['mask'], pairs)
    expect(r.stderr).toBe('')
    const input = parse(pairs).slice(1)
    const recs = parse(r.stdout).slice(1)
    recs.forEach((rec, i) => {
      expect(rec.segments).toEqual(input[i].segments)
      expect(rec.next).toBe(input[i].next)
      for (const [pos] of rec.targets) expect([cls, sep]).not.toContain(input[i].ids[pos])
      expect(rec.targets.length).toBe(maskBudget(input[i].ids.length - 3, 0.15))
    })
  })

  it('writes the unigram counts of its input and reads them back', () => {
    const counts = join(dir, 'counts.txt')
    expect(span(['mask', blocks, '--write-unigram', counts, '-o', join(dir, 'm1.ndjson')]).code).toBe(0)
    const lines = readFileSync(counts, 'utf8').trimEnd().split('\n')
    expect(lines.length).toBe(vocab.tokens.length)
    expect(Number(lines[vocab.ids.get('the')!])).toBeGreaterThan(10_000)
    expect(Number(lines[cls])).toBe(0)
    const r = span(['mask', blocks, '--unigram', counts, '--seed', '1'])
    expect(r.stderr).toBe('')
    expect(parse(r.stdout)[0].history.at(-1).flags.unigram).toBe(counts)
  })

  it('ends quietly with exit 0 when the pipe closes: block | mask | head -1', () => {
    const r = sh(`node bin/run.js block ${tokens} | node bin/run.js mask | head -1`)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(parse(r.stdout)).toHaveLength(1)
    expect(parse(r.stdout)[0].kind).toBe('masked')
  })

  it('writes only the header for empty input', () => {
    const r = span(['mask'], '')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(parse(r.stdout)).toHaveLength(1)
    expect(parse(r.stdout)[0]).toMatchObject({span: 'header', kind: 'masked'})
  })

  it('reads hand-written blocks without a header given --vocab', () => {
    const r = span(['mask', '--vocab', VOCAB_PATH, '--ratio', '0.5'], `{"ids":[${cls},1109,3613,1110,${sep}]}\n`)
    expect(r.stderr).toBe('')
    const [header, rec] = parse(r.stdout)
    expect(header.vocab.sha256).toBe(vocab.info.sha256)
    expect(rec.targets).toHaveLength(2)
    expect(rec.doc).toBeUndefined()
  })
})

describeData('span mask on bad input: one line naming source and line, non-zero exit', () => {
  const good = `{"doc":0,"ids":[${cls},1109,${sep}]}`
  const cases: Array<[string, string | Buffer, RegExp]> = [
    ['invalid JSON', `${blockHeader()}\n${good}\n{"doc":0,"ids":[1,2\n`, /^span mask: stdin:3: invalid JSON/],
    ['a missing field', `${blockHeader()}\n{"doc":0}\n`, /^span mask: stdin:2: missing field "ids"/],
    ['a mistyped field', `${blockHeader()}\n{"doc":0,"ids":"101 102"}\n`, /^span mask: stdin:2: field "ids" must be an array/],
    ['a mistyped doc', `${blockHeader()}\n{"doc":"a","ids":[${cls},${sep}]}\n`, /^span mask: stdin:2: field "doc" must be an integer/],
    ['an id outside the vocabulary', `${blockHeader()}\n${good}\n{"doc":0,"ids":[${cls},28996,${sep}]}\n`, /^span mask: stdin:3: ids\[1\] = 28996 is outside the vocabulary \(size 28996\)/],
    ['a stream from the wrong stage', `${tokenHeader()}\n{"doc":0,"ids":[1109]}\n`, /^span mask: stdin:1: expected a stream of blocks \(from span block\), got tokens \(from span tokenize\)/],
    ['headerless token records (with --vocab)', `{"doc":0,"ids":[1109,3613]}\n`, /^span mask: stdin:1: expected blocks \(from span block\), got ids that do not start with \[CLS\]/],
    ['masked examples', `{"ids":[${cls},103,${sep}],"targets":[[1,5]],"spans":[[1,1,"mask"]]}\n`, /^span mask: stdin:1: expected blocks \(from span block\), got a masked example/],
    ['binary garbage', Buffer.from([0x7b, 0x00, 0xff, 0x10, 0x0a]), /^span mask: stdin:1: binary input/],
    ['binary garbage without NUL', Buffer.from([0xff, 0xfe, 0x81, 0x0a]), /^span mask: stdin:1: invalid JSON/],
    ['a missing vocabulary file', `${blockHeader({vocab: {...vocab.info, path: '/nonexistent/vocab.txt'}})}\n${good}\n`, /^span mask: \/nonexistent\/vocab.txt: vocabulary file not found/],
    ['a changed vocabulary file', `${blockHeader({vocab: {...vocab.info, sha256: 'ab'.repeat(32)}})}\n${good}\n`, /vocabulary does not match the stream's/],
    ['a headerless stream with no vocabulary given', `${good}\n`, /^span mask: stdin: no header record naming the vocabulary .*give --vocab FILE/],
  ]
  for (const [what, input, message] of cases) {
    it(what, () => {
      const r = span(what.includes('--vocab') ? ['mask', '--vocab', VOCAB_PATH] : ['mask'], input)
      expect(r.code).not.toBe(0)
      expect(r.stderr).toMatch(message)
      expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    })
  }

  it('a missing input file', () => {
    const r = span(['mask', join(dir, 'none.ndjson')])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toMatch(/none.ndjson: no such file/)
    expect(r.stdout).toBe('')
  })
})
