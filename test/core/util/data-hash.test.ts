// The data hash finetune --resume compares: a file's SHA-256, a folder's from its files' names and
// sums (coref trains on a folder of .conll files; hashing it as a file failed with EISDIR).
import {createHash} from 'node:crypto'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {dataSha256} from '../../../src/core/util/data-hash.js'

const dir = mkdtempSync(join(tmpdir(), 'span-data-hash-'))

describe('dataSha256', () => {
  it("a file: its bytes' SHA-256", async () => {
    writeFileSync(join(dir, 'f.txt'), 'abc')
    expect(await dataSha256(join(dir, 'f.txt'))).toBe(createHash('sha256').update('abc').digest('hex'))
  })

  it('a folder: stable, and changed by a file’s bytes, a name, or a file in a subfolder', async () => {
    const d = join(dir, 'docs')
    mkdirSync(join(d, 'sub'), {recursive: true})
    writeFileSync(join(d, 'a.conll'), 'x')
    writeFileSync(join(d, 'sub', 'b.conll'), 'y')
    const first = await dataSha256(d)
    expect(await dataSha256(d)).toBe(first)
    writeFileSync(join(d, 'sub', 'b.conll'), 'z')
    const second = await dataSha256(d)
    expect(second).not.toBe(first)
    writeFileSync(join(d, 'c.conll'), '')
    expect(await dataSha256(d)).not.toBe(second)
  })
})
