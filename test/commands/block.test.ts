// `span block` as a user runs it: node bin/run.js processes (dist/ must be built), stdout and stderr apart.
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, expect, it} from 'vitest'
import {BlockPacker} from '../../src/core/data/block.js'
import {describeData, hasData, vocab, wikiRecords} from '../core/data/helpers.js'
import {runShell, runSpan} from '../helpers/spawn.js'

const dir = mkdtempSync(join(tmpdir(), 'span-block-'))
const tokens = join(dir, 'tokens.ndjson')
const recs = hasData ? wikiRecords() : []
const {cls, sep} = vocab.special

function span(args: string[], input?: string) {
  return runSpan(args, {input})
}

const parse = (text: string) => text.trimEnd().split('\n').map((l) => JSON.parse(l))
const header = (kind: string) =>
  JSON.stringify({span: 'header', kind, vocab: vocab.info, cased: true, special: vocab.special, history: [{stage: 'tokenize', version: '0.1.0', flags: {}}]})

beforeAll(() => {
  writeFileSync(tokens, [header('tokens'), ...recs.map((r) => JSON.stringify(r))].join('\n') + '\n')
})

describeData('span block', () => {
  it('packs as BlockPacker does, byte for byte, and appends itself to the header', () => {
    const r = span(['block', '--len', '100', tokens])
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const packer = new BlockPacker(100, cls, sep)
    const want = [...recs.flatMap((x) => packer.push(x)), ...packer.finish()].map((b) => JSON.stringify(b))
    const [head, ...lines] = r.stdout.trimEnd().split('\n')
    expect(lines).toEqual(want)
    expect(JSON.parse(head).history.at(-1)).toEqual({stage: 'block', version: '0.1.0', flags: {len: 100}})
  })

  it('--pairs: [CLS] A [SEP] B [SEP] with segments and next, reproducible by --seed', () => {
    const r = span(['block', '--pairs', '--len', '128', '--seed', '5', tokens])
    expect(r.stderr).toBe('')
    const [head, ...pairs] = parse(r.stdout)
    expect(head.history.at(-1).flags).toEqual({len: 128, pairs: true, seed: 5, pairPool: 1_000_000})
    let next = 0
    for (const p of pairs) {
      const mid = p.ids.indexOf(sep)
      expect(p.ids.length).toBeLessThanOrEqual(128)
      expect(p.ids[0]).toBe(cls)
      expect(p.ids.at(-1)).toBe(sep)
      expect(mid).toBeGreaterThan(1)
      expect(mid).toBeLessThan(p.ids.length - 2)
      expect(p.segments).toEqual(p.ids.map((_: number, i: number) => (i <= mid ? 0 : 1)))
      if (p.next) next++
    }
    expect(Math.abs(next / pairs.length - 0.5)).toBeLessThan(0.05)
    expect(span(['block', '--pairs', '--len', '128', '--seed', '5', tokens]).stdout).toBe(r.stdout)
    expect(span(['block', '--pairs', '--len', '128', '--seed', '6', tokens]).stdout).not.toBe(r.stdout)
  })

  it('refuses blocks as input, naming the stage', () => {
    const r = span(['block'], `${header('blocks')}\n{"doc":0,"ids":[${cls},5,${sep}]}\n`)
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('span block: stdin:1: expected a stream of tokens (from span tokenize), got blocks (from span block)\n')
  })

  it('refuses --pairs with --len below 5', () => {
    const r = span(['block', '--pairs', '--len', '4', tokens])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toBe('span block: --len must be at least 5 with --pairs, got 4\n')
    expect(r.stdout).toBe('')
  })

  it('ends quietly with exit 0 under | head -1', () => {
    const r = runShell(`node bin/run.js block --len 64 ${tokens} | head -1`)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).kind).toBe('blocks')
  })
})
