import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {chooseSpecial, chooseVocab, spanParams} from '../../../src/core/data/inspect-options.js'
import type {Header, HistoryEntry} from '../../../src/core/stream/header.js'
import {VOCAB} from './inspect-fixtures.js'

function header(history: HistoryEntry[], over: Partial<Header> = {}): Header {
  return {span: 'header', kind: 'masked', vocab: null, cased: false, special: null, history, ...over}
}

const maskEntry = (flags: Record<string, unknown>): HistoryEntry => ({stage: 'mask', version: '0.1.0', flags})

describe('spanParams', () => {
  it('takes p and maxSpan from the last mask stage of the history', () => {
    const warns: string[] = []
    const h = header([maskEntry({p: 0.5, maxSpan: 3}), {stage: 'block', version: '0.1.0', flags: {}}, maskEntry({p: 0.3, maxSpan: 6, scheme: 'span'})])
    expect(spanParams(h, {}, (m) => warns.push(m))).toEqual({p: 0.3, maxSpan: 6, from: 'header', scheme: 'span'})
    expect(warns).toEqual([])
  })

  it('uses the defaults 0.2 and 10 without a header or mask stage', () => {
    expect(spanParams(null, {}, () => {})).toEqual({p: 0.2, maxSpan: 10, from: 'default', scheme: null})
    expect(spanParams(header([maskEntry({p: 'x', maxSpan: 0})]), {}, () => {})).toMatchObject({p: 0.2, maxSpan: 10, from: 'default'})
  })

  it('lets a flag override the header, saying so when they differ', () => {
    const warns: string[] = []
    const sp = spanParams(header([maskEntry({p: 0.2, maxSpan: 10})]), {p: 0.4, maxSpan: 10}, (m) => warns.push(m))
    expect(sp).toMatchObject({p: 0.4, maxSpan: 10, from: 'flags'})
    expect(warns).toEqual(['using --p 0.4; the stream was masked with p = 0.2'])
  })
})

describe('chooseSpecial', () => {
  it('prefers flags, then the header', () => {
    const h = header([], {special: {pad: 0, unk: 1, cls: 2, sep: 3, mask: 4}})
    expect(chooseSpecial({}, null, h)).toEqual({cls: 2, sep: 3, pad: 0})
    expect(chooseSpecial({pad: 9}, null, h)).toEqual({cls: 2, sep: 3, pad: 9})
    expect(chooseSpecial({}, null, null)).toBeNull()
  })

  it('refuses an incomplete set', () => {
    expect(() => chooseSpecial({cls: 101}, null, null)).toThrow('special-token ids incomplete: give --sep and --pad too (or --vocab FILE)')
  })
})

describe('chooseVocab', () => {
  const dir = mkdtempSync(join(tmpdir(), 'span-inspect-'))
  writeFileSync(join(dir, 'vocab.txt'), VOCAB.join('\n') + '\n')
  const input = join(dir, 'in.ndjson')

  it('finds the header vocabulary beside the input file', () => {
    const h = header([], {vocab: {path: 'vocab.txt', sha256: '', size: VOCAB.length}})
    const vc = chooseVocab(h, undefined, input, () => {})
    expect(vc.missing).toBeNull()
    expect(vc.vocab?.tokens).toEqual(VOCAB)
  })

  it('says why there is none', () => {
    const h = header([], {vocab: {path: join(dir, 'gone.txt'), sha256: '', size: 5}})
    expect(chooseVocab(h, undefined, input, () => {}).missing).toBe(`vocabulary ${join(dir, 'gone.txt')} (named by the header) not found; give --vocab FILE`)
    expect(chooseVocab(null, undefined, '-', () => {})).toEqual({vocab: null, missing: 'no vocabulary (the stream has no header naming one; give --vocab FILE)'})
  })

  it('warns when --vocab is not the file the stream was made with', () => {
    const warns: string[] = []
    const h = header([], {vocab: {path: 'elsewhere.txt', sha256: 'f'.repeat(64), size: VOCAB.length}})
    const vc = chooseVocab(h, join(dir, 'vocab.txt'), input, (m) => warns.push(m))
    expect(vc.vocab?.special.mask).toBe(4)
    expect(warns).toEqual([`${join(dir, 'vocab.txt')}: not the vocabulary the stream was made with (sha256 differs); word boundaries may be wrong`])
  })
})
