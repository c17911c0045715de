// `span tokenize` as a user runs it: node bin/run.js processes (dist/ must be built), stdout and stderr apart.
import {existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {expect, it} from 'vitest'
import {WordPieceTokenizer} from '../../src/core/text/tokenizer.js'
import {DEFAULT_VOCAB, loadVocab} from '../../src/core/text/vocab.js'
import {VOCABS, WIKITEXT_VALID} from '../core/text/tokenizer-oracle.js'
import {describeShared, ifShared} from '../helpers/shared-data.js'
import {BIN as bin, runShell, runSpan} from '../helpers/spawn.js'

const describe = describeShared('vocab/bert-base-cased.txt', 'vocab/bert-base-uncased.txt', 'wikitext/wikitext-2.valid.txt')

const dir = mkdtempSync(join(tmpdir(), 'span-tokenize-'))
const cased = ifShared(['vocab/bert-base-cased.txt'], () => new WordPieceTokenizer(loadVocab(VOCABS.cased), {lowercase: false}))

function span(args: string[], input?: string | Buffer) {
  return runSpan(['tokenize', ...args], {input})
}

function sh(script: string) {
  return runShell(script)
}

const parse = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l))

describe('span tokenize', () => {
  it('writes a header, then one record per non-blank line, documents split at blank lines', () => {
    const r = span(['--vocab', VOCABS.cased], 'Hello, world!\n\n\nSecond doc.\n\u0001\n\nthird\n')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const [head, ...recs] = parse(r.stdout)
    const vocab = loadVocab(VOCABS.cased)
    expect(head).toEqual({
      span: 'header',
      kind: 'tokens',
      vocab: vocab.info,
      cased: true,
      special: vocab.special,
      history: [{stage: 'tokenize', version: '0.1.0', flags: {vocab: VOCABS.cased, cased: true, tokens: false, field: null, docStart: null}}],
    })
    expect(recs).toEqual([
      {doc: 0, ids: cased.encode('Hello, world!')},
      {doc: 1, ids: cased.encode('Second doc.')},
      {doc: 1, ids: []},
      {doc: 2, ids: cased.encode('third')},
    ])
  })

  it('reads a file argument with --doc-start and --tokens, as the tokenizer does line by line', () => {
    const r = span(['--vocab', VOCABS.cased, '--doc-start', '^ = [^=]', '--tokens', WIKITEXT_VALID])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const [, ...recs] = parse(r.stdout)
    const lines = readFileSync(WIKITEXT_VALID, 'utf8').split('\n').filter((l) => l.trim() !== '')
    expect(recs.map((x) => x.ids)).toEqual(lines.map((l) => cased.encode(l)))
    expect(recs[5].tokens).toEqual(cased.tokenize(lines[5]))
    const titles = lines.filter((l) => /^ = [^=]/.test(l)).length
    expect(recs.at(-1).doc).toBe(titles - 1)
    expect(new Set(recs.map((x) => x.doc)).size).toBe(titles)
  })

  it('follows the vocabulary’s case unless --cased/--uncased says otherwise', () => {
    const headOf = (args: string[]) => parse(span(args, 'Ab\n').stdout)[0]
    expect(headOf(['--vocab', VOCABS.uncased]).cased).toBe(false)
    expect(headOf(['--vocab', VOCABS.uncased, '--cased']).cased).toBe(true)
    expect(headOf(['--vocab', VOCABS.cased, '--uncased']).cased).toBe(false)
    const [, rec] = parse(span(['--vocab', VOCABS.cased, '--uncased', '--tokens'], 'Ab Éclair\n').stdout)
    expect(rec.tokens).toEqual(new WordPieceTokenizer(loadVocab(VOCABS.cased), {lowercase: true}).tokenize('Ab Éclair'))
    expect(span(['--vocab', VOCABS.cased, '--cased', '--uncased'], '').code).not.toBe(0)
  })

  it('uses the bundled vocabulary by default', () => {
    const r = span([], 'the cat\n')
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(parse(r.stdout)[0].vocab.sha256).toBe(loadVocab(DEFAULT_VOCAB).info.sha256)
  })

  it('reads JSONL with --field, one document per record', () => {
    const input = '{"text":"One.\\nTwo."}\n{"id":2,"text":"Three"}\n'
    const r = span(['--vocab', VOCABS.cased, '--field', 'text'], input)
    expect(r.stderr).toBe('')
    expect(parse(r.stdout).slice(1)).toEqual([
      {doc: 0, ids: cased.encode('One.')},
      {doc: 0, ids: cased.encode('Two.')},
      {doc: 1, ids: cased.encode('Three')},
    ])
  })

  it('writes -o files under a temporary name and renames them when done', () => {
    const out = join(dir, 'out.ndjson')
    const r = span(['--vocab', VOCABS.cased, '-o', out], 'a b c\n')
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('')
    expect(parse(readFileSync(out, 'utf8'))).toHaveLength(2)
    expect(readdirSync(dir).filter((f) => f.includes('.tmp-'))).toEqual([])
  })

  it('gives a header only for empty input', () => {
    const r = span(['--vocab', VOCABS.cased], '')
    expect(r.code).toBe(0)
    expect(r.stderr).toBe('')
    expect(parse(r.stdout).map((x) => x.span)).toEqual(['header'])
  })

  it('ends quietly with 0 when the reader goes away (| head -1)', () => {
    const big = join(dir, 'big.txt')
    writeFileSync(big, readFileSync(WIKITEXT_VALID, 'utf8').repeat(8))
    const r = sh(`node ${bin} tokenize --vocab ${VOCABS.cased} ${big} | head -1`)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).span).toBe('header')
  })
})

describe('span tokenize on bad input: one line on stderr, non-zero exit', () => {
  const oneLine = (r: {code: number | null; stderr: string}, pattern: RegExp) => {
    expect(r.code).not.toBe(0)
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(r.stderr).toMatch(pattern)
  }

  it('invalid JSON with --field', () => {
    oneLine(span(['--vocab', VOCABS.cased, '--field', 'text'], '{"text":"ok"}\n{"text": nope}\n'), /^span tokenize: stdin:2: invalid JSON/)
  })

  it('a missing or non-string field', () => {
    oneLine(span(['--vocab', VOCABS.cased, '--field', 'body'], '{"text":"x"}\n'), /^span tokenize: stdin:1: missing field "body"/)
    oneLine(span(['--vocab', VOCABS.cased, '--field', 'text'], '{"text":"x"}\n{"text":["a"]}\n'), /^span tokenize: stdin:2: field "text" must be a string, got an array/)
  })

  it('a missing vocabulary file or input file', () => {
    oneLine(span(['--vocab', join(dir, 'nope.txt')], 'x\n'), /^span tokenize: .*nope\.txt: vocabulary file not found/)
    oneLine(span(['--vocab', VOCABS.cased, join(dir, 'missing.txt')]), /^span tokenize: .*missing\.txt: no such file/)
  })

  it('binary input (a NUL byte), with its line, under --binary refuse (by default a few NULs are text: issue 13)', () => {
    oneLine(span(['--vocab', VOCABS.cased, '--binary', 'refuse'], Buffer.from('fine\nstill fine\nbin\u0000ary\n')), /^span tokenize: stdin:3: binary input/)
  })

  it('an invalid --doc-start pattern, and --doc-start with --field', () => {
    oneLine(span(['--vocab', VOCABS.cased, '--doc-start', '(']), /--doc-start/)
    const r = span(['--vocab', VOCABS.cased, '--doc-start', 'x', '--field', 'text'], '')
    expect(r.code).not.toBe(0)
    expect(r.stdout).toBe('')
  })

  it('leaves no output file behind when it fails', () => {
    const out = join(dir, 'failed.ndjson')
    const r = span(['--vocab', VOCABS.cased, '--field', 'text', '-o', out], '{"text":"a"}\n{oops\n')
    expect(r.code).not.toBe(0)
    expect(existsSync(out)).toBe(false)
    expect(readdirSync(dir).filter((f) => f.startsWith('failed'))).toEqual([])
  })
})
