// Output files land through a temporary name and a rename, except where a rename would destroy
// what is there: `-o /dev/null` once replaced the machine's /dev/null with a plain file (as root,
// the rename is allowed). A private null device (mknod, root only), a FIFO and a symbolic link
// stand in for the real ones here, so a regression cannot break the machine running the tests.
import {spawn, spawnSync} from 'node:child_process'
import {lstatSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {writeChartFile} from '../../../src/core/data/chart-file.js'
import {writeJsonAtomic} from '../../../src/core/tasks/squad/write.js'
import {outputTarget} from '../../../src/core/util/target.js'

const bin = join(import.meta.dirname, '..', '..', '..', 'bin', 'run.js')
const tmp = mkdtempSync(join(tmpdir(), 'span-target-'))
writeFileSync(join(tmp, 'text.txt'), 'the quick brown fox.\n\njumps over the lazy dog.\n')
const nullDev = join(tmp, 'null')
const canMknod = spawnSync('mknod', ['-m', '666', nullDev, 'c', '1', '3']).status === 0

const span = (args: string[]) => spawnSync('node', [bin, ...args], {cwd: tmp, encoding: 'utf8'})

describe('outputTarget', () => {
  it('renames onto a new name or a regular file, through the real path of a link', async () => {
    writeFileSync(join(tmp, 'real.txt'), 'old')
    symlinkSync('real.txt', join(tmp, 'link.txt'))
    expect(await outputTarget(join(tmp, 'new.txt'))).toMatchObject({direct: false, path: join(tmp, 'new.txt')})
    const t = await outputTarget(join(tmp, 'link.txt'))
    expect(t).toMatchObject({direct: false, path: join(tmp, 'real.txt')})
    expect(t.direct ? '' : t.tmp).toMatch(/\/\.real\.txt\.tmp-\d+$/)
  })
  it('writes a device or a FIFO in place', async () => {
    expect(await outputTarget('/dev/null')).toEqual({direct: true, path: '/dev/null'})
    expect(spawnSync('mkfifo', [join(tmp, 'fifo0')]).status).toBe(0)
    expect((await outputTarget(join(tmp, 'fifo0'))).direct).toBe(true)
  })
})

describe('span -o onto what a rename would destroy', () => {
  it.skipIf(!canMknod)('a null device stays a device (-o, a chart, a SQuAD prediction file)', async () => {
    expect(span(['tokenize', 'text.txt', '-o', nullDev]).status).toBe(0)
    await writeChartFile(nullDev, '<svg/>')
    await writeJsonAtomic(nullDev, {q: 'a'})
    expect(statSync(nullDev).isCharacterDevice()).toBe(true)
    expect(readdirSync(tmp).filter((n) => n.includes('.tmp-'))).toEqual([])
  })
  it('a FIFO receives the output and stays a FIFO', async () => {
    const fifo = join(tmp, 'fifo1')
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0)
    const reader = new Promise<string>((resolve) => {
      const p = spawn('cat', [fifo])
      let out = ''
      p.stdout.on('data', (d) => (out += d))
      p.on('close', () => resolve(out))
    })
    const w = spawn('node', [bin, 'tokenize', 'text.txt', '-o', fifo], {cwd: tmp})
    const code = await new Promise((resolve) => w.on('close', resolve))
    expect(code).toBe(0)
    expect((await reader).trim().split('\n').length).toBeGreaterThan(1)
    expect(lstatSync(fifo).isFIFO()).toBe(true)
  })
  it('a symbolic link keeps pointing at the file, which receives the output', () => {
    writeFileSync(join(tmp, 'target.ndjson'), 'old\n')
    symlinkSync('target.ndjson', join(tmp, 'out-link.ndjson'))
    expect(span(['tokenize', 'text.txt', '-o', 'out-link.ndjson']).status).toBe(0)
    expect(lstatSync(join(tmp, 'out-link.ndjson')).isSymbolicLink()).toBe(true)
    expect(readFileSync(join(tmp, 'target.ndjson'), 'utf8')).toContain('"ids"')
  })
})
