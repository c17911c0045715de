// Files read whole are bounded by what they are (issue 25, cause 6): a regular file by its size
// before any byte is read, a FIFO (or a device) as soon as it passes the bound; under the bound
// the bytes are the file's, whatever the reads return. Same-path checks see through spellings.
import {spawn} from 'node:child_process'
import {linkSync, mkdirSync, mkdtempSync, symlinkSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {LIMITS, readWhole, readWholeSync} from '../../../src/core/util/read-whole.js'
import {realPathOf, samePlace} from '../../../src/core/util/target.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-read-whole-'))

describe('readWhole', () => {
  it('reads a file whole, sync and async, empty included', async () => {
    const p = join(tmp, 'a.txt')
    writeFileSync(p, 'x'.repeat(5_000_000) + 'end')
    expect(readWholeSync(p, 'config').toString().endsWith('end')).toBe(true)
    expect((await readWhole(p, 'config')).length).toBe(5_000_003)
    writeFileSync(join(tmp, 'empty'), '')
    expect(readWholeSync(join(tmp, 'empty'), 'config').length).toBe(0)
  })

  it('refuses a regular file over the bound by its size (a sparse 16 MB + 1 file is never read)', async () => {
    const p = join(tmp, 'big.json')
    writeFileSync(p, '')
    truncateSync(p, LIMITS.config + 1)
    expect(() => readWholeSync(p, 'config')).toThrow(/big\.json: more than 16 MB, too large for a JSON settings file/)
    await expect(readWhole(p, 'config')).rejects.toThrow(/more than 16 MB/)
  })

  it('refuses a FIFO as it passes the bound, and reads one under it', async () => {
    const fifo = join(tmp, 'fifo')
    expect(spawn('mkfifo', [fifo]).pid).toBeGreaterThan(0)
    await new Promise((r) => setTimeout(r, 200))
    const writer = spawn('bash', ['-c', `head -c ${LIMITS.config + 100} /dev/zero > ${fifo}`])
    await expect(readWhole(fifo, 'config')).rejects.toThrow(/fifo: more than 16 MB/)
    writer.kill()
    const small = spawn('bash', ['-c', `printf '{"a":1}' > ${fifo}`])
    expect((await readWhole(fifo, 'config')).toString()).toBe('{"a":1}')
    small.kill()
  })

  it('/dev/zero stops at the bound', () => {
    expect(() => readWholeSync('/dev/zero', 'config')).toThrow(/\/dev\/zero: more than 16 MB/)
  })
})

describe('realPathOf and samePlace', () => {
  it('one file through ./, a trailing slash, a link, a dangling link, a hard link', async () => {
    mkdirSync(join(tmp, 'd'))
    writeFileSync(join(tmp, 'd', 'f'), 'x')
    symlinkSync('d', join(tmp, 'dl'))
    symlinkSync('d/new', join(tmp, 'dangling'))
    linkSync(join(tmp, 'd', 'f'), join(tmp, 'hard'))
    expect(await realPathOf(join(tmp, 'dl', 'f'))).toBe(await realPathOf(join(tmp, 'd', 'f')))
    expect(await samePlace(join(tmp, 'd') + '/', join(tmp, '.', 'dl'))).toBe(true)
    expect(await samePlace(join(tmp, 'dangling'), join(tmp, 'dl', 'new'))).toBe(true) // neither exists yet
    expect(await samePlace(join(tmp, 'hard'), join(tmp, 'd', 'f'))).toBe(true)
    expect(await samePlace(join(tmp, 'd', 'f'), join(tmp, 'd', 'g'))).toBe(false)
  })
})
