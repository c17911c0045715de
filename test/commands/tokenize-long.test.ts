// One raw-text line of 64 MB through `span tokenize` (issue 13, item 5): memory stays bounded
// (peak RSS of the child, from process.resourceUsage at its exit, far below the line's size) and
// the record is the one the whole line gives: the ids of a sentence repeated, byte for byte.
import {spawn} from 'node:child_process'
import {closeSync, mkdtempSync, openSync, readSync, statSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {WordPieceTokenizer} from '../../src/core/text/tokenizer.js'
import {DEFAULT_VOCAB, loadVocab} from '../../src/core/text/vocab.js'

const root = join(import.meta.dirname, '..', '..')
const bin = join(root, 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-long-'))
const REPORT_RSS = `data:text/javascript,process.on('exit',()=>process.stderr.write('maxrss '+process.resourceUsage().maxRSS+'\\n'))`

function run(args: string[]): Promise<{code: number; stderr: string}> {
  return new Promise((resolve) => {
    const p = spawn('node', ['--import', REPORT_RSS, bin, ...args], {cwd: tmp, stdio: ['ignore', 'ignore', 'pipe']})
    let stderr = ''
    p.stderr.on('data', (d) => (stderr += d))
    p.on('close', (code) => resolve({code: code ?? -1, stderr}))
  })
}

function tail(path: string, bytes: number): string {
  const fd = openSync(path, 'r')
  const buf = Buffer.alloc(bytes)
  readSync(fd, buf, 0, bytes, statSync(path).size - bytes)
  closeSync(fd)
  return buf.toString()
}

describe('span tokenize: a 64 MB line', () => {
  it('in bounded memory, with the ids of the whole line', async () => {
    const sentence = 'The quick brown fox, unaffable, jumps over the lazy dog 中国. '
    const times = Math.ceil((64 * 2 ** 20) / Buffer.byteLength(sentence))
    const fd = openSync(join(tmp, 'long.txt'), 'w')
    const block = Buffer.from(sentence.repeat(10_000))
    for (let i = 0; i < times / 10_000; i++) writeSync(fd, block)
    writeSync(fd, '\nnext line\n')
    closeSync(fd)
    const r = await run(['tokenize', 'long.txt', '-o', 'long.ndjson'])
    expect(r.code, r.stderr).toBe(0)
    const rss = Number(/maxrss (\d+)/.exec(r.stderr)?.[1]) / 1024 // MB
    const tok = new WordPieceTokenizer(loadVocab(DEFAULT_VOCAB), {lowercase: false})
    const ids = tok.encode(sentence)
    const record = `{"doc":0,"ids":[${Array.from({length: Math.ceil(times / 10_000) * 10_000}, () => ids.join(',')).join(',')}]}\n`
    const next = `{"doc":0,"ids":[${tok.encode('next line').join(',')}]}\n`
    const out = join(tmp, 'long.ndjson')
    const headerBytes = statSync(out).size - Buffer.byteLength(record) - next.length
    expect(tail(out, 200 + next.length)).toBe(record.slice(-200) + next)
    expect(headerBytes).toBeGreaterThan(100)
    expect(headerBytes).toBeLessThan(2000) // the header line: the record's size is exact
    console.log(`tokenize, one 64 MB line: peak RSS ${rss.toFixed(0)} MB`)
    expect(rss).toBeLessThan(250) // held whole, this line took 400 MB (a 200 MB one 1.0 GB); a small file takes about 70
  }, 60_000)
})

describe('NDJSON keeps its bound: --max-line-mb', () => {
  it('every command that reads NDJSON names the source and line of a longer record, in one line', async () => {
    writeFileSync(join(tmp, 'huge.ndjson'), `{"doc":0,"ids":[${'1,'.repeat(2 ** 20)}1]}\n`)
    const cases = [
      ['block', '--len', '16'],
      ['mask'],
      ['inspect'],
      ['plot'],
      ['pretrain', '--preset', 'tiny', '--backend', 'wasm', '--out', 'never'],
      ['tokenize', '--field', 'text'],
      ['vocab', '--field', 'text'],
      ['segment-ngrams', '--build', '--field', 'text'],
    ]
    for (let i = 0; i < cases.length; i += 2) {
      const rs = await Promise.all(cases.slice(i, i + 2).map((c) => run([c[0], 'huge.ndjson', '--max-line-mb', '1', ...c.slice(1)])))
      rs.forEach((r, k) => {
        const cmd = cases[i + k][0]
        const lines = r.stderr.split('\n').filter((l) => l !== '' && !/^maxrss |: (config|model): /.test(l))
        expect(lines, cmd).toEqual([`span ${cmd}: huge.ndjson:1: a line longer than 1 MB (--max-line-mb); not one record per line?`])
        expect(r.code, cmd).toBe(1)
      })
    }
  }, 120_000)

  it('is at most 511 MB (a record becomes one string): a larger bound is a usage error', async () => {
    const r = await run(['inspect', 'huge.ndjson', '--max-line-mb', '600'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('span inspect: --max-line-mb: expected an integer ≤ 511, got 600 (--max-line-mb N: longest NDJSON record read, in MB')
  })
})
