import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {RecordIndex} from '../../../src/core/train/index-file.js'
import {EpochSampler, deriveRng} from '../../../src/core/train/sampler.js'
import {DEFAULTS, resolveConfig, resolveWarmup} from '../../../src/core/train/config.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-sampler-'))

describe('deriveRng', () => {
  it('depends only on its parts, and differs when any part does', () => {
    const draw = (...p: number[]) => Array.from({length: 4}, ((r) => () => r.next())(deriveRng(7, ...p)))
    expect(draw(2, 3, 4)).toEqual(draw(2, 3, 4))
    expect(draw(2, 3, 4)).not.toEqual(draw(2, 3, 5))
    expect(draw(2, 4, 4)).not.toEqual(draw(2, 3, 4))
    expect(draw(2, 3, 2 ** 32 + 4)).not.toEqual(draw(2, 3, 4)) // the high word counts too
  })
})

describe('EpochSampler', () => {
  it('visits every example once per epoch, in a new order each epoch', () => {
    const s = new EpochSampler(50, 3)
    const epochs = [0, 1].map(() => Array.from({length: 50}, () => s.next()))
    for (const [e, draws] of epochs.entries()) {
      expect(draws.every((d) => d.epoch === e)).toBe(true)
      expect(new Set(draws.map((d) => d.index)).size).toBe(50)
    }
    expect(epochs[0].map((d) => d.index)).not.toEqual(epochs[1].map((d) => d.index))
  })

  it('continues exactly from a saved position', () => {
    const a = new EpochSampler(7, 1)
    const whole = Array.from({length: 20}, () => a.next())
    const b = new EpochSampler(7, 1)
    for (let i = 0; i < 9; i++) b.next()
    const c = new EpochSampler(7, 1)
    c.restore(b.state())
    expect(Array.from({length: 11}, () => c.next())).toEqual(whole.slice(9))
    expect(() => c.restore({epoch: 0, cursor: 8})).toThrow(RangeError)
  })
})

describe('RecordIndex', () => {
  it('reads records back by byte offset, skipping header and blank lines, with CRLF and long lines', async () => {
    const long = 'x'.repeat(3 << 20) // crosses the 1 MiB read chunks
    const recs = [{a: 1}, {b: 'é'}, {c: long}, {d: 4}]
    const text = `{"span":"header","kind":"blocks","history":[]}\r\n${JSON.stringify(recs[0])}\n\n${JSON.stringify(recs[1])}\r\n` +
      `${JSON.stringify(recs[2])}\n   \n${JSON.stringify(recs[3])}`
    const path = join(tmp, 'recs.ndjson')
    writeFileSync(path, text)
    const seen: number[] = []
    let header = ''
    const index = await RecordIndex.build(path, (rec) => seen.push(rec.line), (rec) => (header = String(rec.value.kind)))
    expect(header).toBe('blocks')
    expect(seen).toEqual([2, 4, 5, 7])
    expect(index.size).toBe(4)
    for (const i of [3, 0, 2, 1]) expect(index.read(i)).toEqual({value: recs[i], line: seen[i]})
    expect(index.fingerprint.records).toBe(4)
    expect(index.fingerprint.bytes).toBe(Buffer.byteLength(text))
    await index.close()
  })

  it('names the line of invalid JSON', async () => {
    const path = join(tmp, 'bad.ndjson')
    writeFileSync(path, '{"ids":[2,3]}\n{"ids": [2,\n')
    await expect(RecordIndex.build(path, () => {}, () => {})).rejects.toThrow(/^.*bad\.ndjson:2: invalid JSON/)
  })
})

describe('resolveConfig', () => {
  it('layers defaults, file and flags (later wins), resolves the warm-up and rejects unknown keys', () => {
    const c = resolveConfig([{name: 'file', values: {lr: 0.001, 'max-steps': 50}}, {name: 'flags', values: {lr: 0.002}}])
    expect(c.lr).toBe(0.002)
    expect(c['max-steps']).toBe(50)
    expect(c['batch-size']).toBe(DEFAULTS['batch-size'])
    expect(resolveWarmup(c)).toBe(5) // 10% of a short run
    expect(resolveWarmup({...c, 'max-steps': 1_000_000})).toBe(10_000)
    expect(() => resolveConfig([{name: 'cfg.json', values: JSON.parse('{"bach": 3}')}])).toThrow('cfg.json: unknown setting "bach"')
    expect(() => resolveConfig([{name: 'flags', values: {objectives: 'sbo'}}])).toThrow(/must include mlm/)
  })
})
