// Issue 25 cause 7: a deeply nested pickle ended encode, export and pretrain --init with
// "RangeError: Maximum call stack size exceeded". The unpickler bounds nesting and refuses a
// container changed after it was nested (a cycle or a top-down chain built through the memo).
import {copyFileSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {MAX_PICKLE_DEPTH} from '../../../../src/core/model/torch/pickle.js'
import {decodeTorch} from '../../../../src/core/model/torch/torch-load.js'
import {runSpan} from '../../../helpers/spawn.js'

const fixtures = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'torch')
const P = (...b: number[]) => Buffer.from(b)
const MAGIC = P(0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e) // LONG1 0x1950a86a20f9469cfc6c
const HEADER = Buffer.concat([MAGIC, P(0x80, 2, 0x4d, 0xe9, 0x03, 0x2e), P(0x80, 2, 0x7d, 0x2e)]) // 1001, {}
const KEYS = P(0x80, 2, 0x5d, 0x2e) // []

/** A legacy torch.save stream whose object is the pickle body `main` (without PROTO and STOP). */
const legacy = (main: Buffer): Buffer => Buffer.concat([HEADER, P(0x80, 2), main, P(0x2e), KEYS])
const repeat = (n: number, b: Buffer): Buffer => Buffer.concat(Array.from({length: n}, () => b))
const KEY_A = P(0x8c, 1, 0x61) // SHORT_BINUNICODE "a"

/** {"a": {"a": … {} …}} nested `n` deep, filled bottom-up as torch.save would. */
const nestedDicts = (n: number) => legacy(Buffer.concat([repeat(n, Buffer.concat([P(0x7d), KEY_A])), P(0x7d), repeat(n, P(0x73))]))
/** [[[…]]] built top-down: each list put in its parent, then filled through the memo. */
const chain = (n: number) =>
  legacy(Buffer.concat([P(0x5d, 0x71, 0), ...Array.from({length: n}, (_, i) => P(0x68, i % 256, 0x5d, 0x71, (i + 1) % 256, 0x61, 0x30)), P(0x30, 0x7d)]))
/** A list that contains itself. */
const cycle = legacy(P(0x5d, 0x71, 0, 0x68, 0, 0x61))

describe('the unpickler bounds nesting', () => {
  it('reads nesting up to the bound, and refuses one level more by name', () => {
    expect(() => decodeTorch(nestedDicts(MAX_PICKLE_DEPTH - 1), 'x.bin')).not.toThrow(/nested/)
    expect(() => decodeTorch(nestedDicts(MAX_PICKLE_DEPTH), 'x.bin')).toThrow(/^x\.bin: pickle at byte \d+: containers nested more than 100 deep/)
  })

  it('refuses 100,000 levels without a stack overflow', () => {
    expect(() => decodeTorch(nestedDicts(100_000), 'deep.bin')).toThrow(/^deep\.bin: pickle at byte \d+: containers nested more than 100 deep/)
  })

  it('refuses a container changed after it was nested: a cycle, a chain built through the memo', () => {
    expect(() => decodeTorch(cycle, 'c.bin')).toThrow(/^c\.bin: pickle at byte \d+: a container changed after it was nested/)
    expect(() => decodeTorch(chain(100_000), 'c.bin')).toThrow(/^c\.bin: pickle at byte \d+: a container changed after it was nested/)
  })

  it('appends a million items at once without a stack overflow', () => {
    const items = repeat(1_000_000, P(0x4e)) // None × 10^6
    expect(() => decodeTorch(legacy(Buffer.concat([P(0x5d, 0x28), items, P(0x65)])), 'wide.bin')).toThrow('wide.bin: the checkpoint holds no state dict')
  })
})

describe('span export and encode with a deeply nested pytorch_model.bin (bin/run.js)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'span-pickle-'))
  const model = join(dir, 'm')
  mkdirSync(model)
  copyFileSync(join(fixtures, 'legacy-f32', 'config.json'), join(model, 'config.json'))
  copyFileSync(join(fixtures, 'legacy-f32', 'vocab.txt'), join(model, 'vocab.txt'))
  writeFileSync(join(model, 'pytorch_model.bin'), nestedDicts(100_000))
  const bin = join(model, 'pytorch_model.bin')

  it.each([
    ['export', ['export', '--model', model, '--to', join(dir, 'out'), '--format', 'safetensors']],
    ['encode', ['encode', '--model', model]],
  ])('%s: one line naming the file, exit 1', (name, args) => {
    const r = runSpan(args, {input: '', timeout: 120_000})
    expect(r.stderr).toMatch(
      new RegExp(`^span ${name}: ${bin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: pickle at byte \\d+: containers nested more than 100 deep [^\\n]*\\n$`),
    )
    expect(r.code).toBe(1)
  })
})
