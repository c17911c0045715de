import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {REBUILD_EVERY, Unigram, formatUnigramFile, readUnigramFile} from '../../../src/core/data/unigram.js'

const special = Uint8Array.from([1, 0, 0, 0, 1]) // ids 0 and 4 special

describe('Unigram', () => {
  it('draws ids in proportion to their counts, never a special id', () => {
    const u = new Unigram(special)
    u.add([0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4])
    expect(u.total).toBe(7)
    const rng = new Rng(1)
    const hits = [0, 0, 0, 0, 0]
    for (let i = 0; i < 70_000; i++) hits[u.sample(rng)]++
    expect(hits[0] + hits[4]).toBe(0)
    expect(hits[1] / 70_000).toBeCloseTo(1 / 7, 2)
    expect(hits[2] / 70_000).toBeCloseTo(2 / 7, 2)
    expect(hits[3] / 70_000).toBeCloseTo(4 / 7, 2)
  })

  it('follows the running counts on a deterministic schedule', () => {
    const u = new Unigram(special)
    u.add([1])
    const rng = new Rng(2)
    expect(u.sample(rng)).toBe(1)
    u.add(new Array(REBUILD_EVERY - 1).fill(2)) // not yet a rebuild
    expect(u.sample(rng)).toBe(1)
    u.add([2]) // REBUILD_EVERY tokens since the last build: the table catches up
    let twos = 0
    for (let i = 0; i < 1000; i++) if (u.sample(rng) === 2) twos++
    expect(twos).toBeGreaterThan(990)
  })

  it('refuses to draw with nothing counted', () => {
    expect(() => new Unigram(special).sample(new Rng(1))).toThrow(/no tokens counted/)
  })

  it('reads and writes vocabulary-aligned counts files, ignoring special ids', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-unigram-'))
    const path = join(dir, 'counts.txt')
    writeFileSync(path, formatUnigramFile(Float64Array.from([9, 1, 0, 3, 7])))
    const counts = readUnigramFile(path, 5)
    expect(Array.from(counts)).toEqual([9, 1, 0, 3, 7])
    expect(new Unigram(special, counts).total).toBe(4)
    expect(() => readUnigramFile(path, 6)).toThrow(/5 lines of counts, expected one per vocabulary entry \(6\)/)
    writeFileSync(path, '1\n2\nx\n4\n5\n')
    expect(() => readUnigramFile(path, 5)).toThrow(/counts.txt:3: expected a non-negative integer count/)
    expect(() => readUnigramFile(join(dir, 'none.txt'), 5)).toThrow(/not found/)
  })
})
