// The atomic checkpoint directory (util/atomic.ts) and the output-directory lock (util/lock.ts).
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync} from 'node:fs'
import {writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {MANIFEST_FILE, pidAlive, recoverDir, recoverRun, verifyManifest, writeFilesAtomically} from '../../../src/core/util/atomic.js'
import {makeDirs} from '../../../src/core/util/dirs.js'
import {lockDir, lockPathOf} from '../../../src/core/util/lock.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-atomic-'))
const file = (name: string, text: string) => ({name, write: (p: string) => writeFile(p, text)})
/** A pid no process has: one of a process that has just exited. */
const deadPid = (): number => Number(spawnSync('node', ['-e', 'process.stdout.write(String(process.pid))'], {encoding: 'utf8'}).stdout)

/**
 * A child that exits under a parent that never reaps it: sh starts it and execs into sleep. It
 * exits 0.2 s later, after the exec (sooner, sh itself might reap it).
 */
async function makeZombie() {
  const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 60'], {stdio: ['ignore', 'pipe', 'ignore']})
  const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d) => resolve(String(d)))))
  const state = () => readFileSync(`/proc/${zombie}/stat`, 'latin1')
  for (let i = 0; i < 500 && !/\) Z /.test(state()); i++) await new Promise((r) => setTimeout(r, 20))
  return {parent, zombie}
}

describe('writeFilesAtomically', () => {
  it('replaces a checkpoint as a whole, keeps other entries, leaves no temporaries, and writes a manifest', async () => {
    const dir = join(tmp, 'a')
    await writeFilesAtomically(dir, [file('x.json', 'old x'), file('y.bin', 'old y'), file('only-old.txt', 'gone')])
    mkdirSync(join(dir, 'checkpoint-5'))
    writeFileSync(join(dir, 'checkpoint-5', 'z'), 'kept')
    await writeFilesAtomically(dir, [file('x.json', 'new x'), file('y.bin', 'new y')])
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('new x')
    expect(readFileSync(join(dir, 'checkpoint-5', 'z'), 'utf8')).toBe('kept') // other entries carried over
    expect(existsSync(join(dir, 'only-old.txt'))).toBe(false) // the old save's own files never mix in
    expect(readdirSync(tmp).filter((n) => n.startsWith('.a.'))).toEqual([])
    expect(await verifyManifest(dir)).toBe(true)
  })

  it('a failed write leaves the previous checkpoint unchanged and no temporary directory', async () => {
    const dir = join(tmp, 'b')
    await writeFilesAtomically(dir, [file('x.json', 'old')])
    const full = {
      name: 'y.bin',
      write: async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), {code: 'ENOSPC'})
      },
    }
    await expect(writeFilesAtomically(dir, [file('x.json', 'new'), full])).rejects.toThrow(/ENOSPC/)
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('old')
    expect(readdirSync(tmp).filter((n) => n.startsWith('.b.'))).toEqual([])
  })

  it('recovers from a kill between the renames: the old directory set aside is put back; a dead temporary is removed', async () => {
    const dir = join(tmp, 'c')
    await writeFilesAtomically(dir, [file('x.json', 'old')])
    const pid = deadPid()
    spawnSync('mv', [dir, join(tmp, `.c.old-${pid}`)]) // killed after "old aside", before "new in"
    mkdirSync(join(tmp, `.c.tmp-${pid}`))
    writeFileSync(join(tmp, `.c.tmp-${pid}`, 'x.json'), 'half')
    const notes = await recoverDir(dir)
    expect(notes).toHaveLength(2)
    expect(readFileSync(join(dir, 'x.json'), 'utf8')).toBe('old')
    expect(readdirSync(tmp).filter((n) => n.startsWith('.c.'))).toEqual([])
    expect(await verifyManifest(dir)).toBe(true)
  })

  it('recoverRun repairs every checkpoint of a run directory a dead process left half-saved, with a notice each', async () => {
    const run = join(tmp, 'run')
    await writeFilesAtomically(join(run, 'checkpoint-3'), [file('x.json', 'step 3')])
    const pid = deadPid()
    spawnSync('mv', [join(run, 'checkpoint-3'), join(run, `.checkpoint-3.old-${pid}`)]) // step 3 set aside, then killed
    mkdirSync(join(run, `.checkpoint-4.tmp-${pid}`)) // step 4 half-written (Open MPI's SIGKILL mid-save)
    writeFileSync(join(run, `.checkpoint-4.tmp-${pid}`, 'x.json'), 'half')
    mkdirSync(join(run, `.checkpoint-5.tmp-${process.pid}`)) // a live process's save: left alone
    const notes = await recoverRun(run)
    expect(notes).toEqual([
      `restored ${join(run, 'checkpoint-3')} from ${join(run, `.checkpoint-3.old-${pid}`)} (a save was interrupted between its renames)`,
      `removed the unfinished ${join(run, `.checkpoint-4.tmp-${pid}`)} of a dead process`,
    ])
    expect(readdirSync(run).sort()).toEqual([`.checkpoint-5.tmp-${process.pid}`, 'checkpoint-3'])
    expect(await verifyManifest(join(run, 'checkpoint-3'))).toBe(true)
  })

  it('verifyManifest refuses a checkpoint whose files are not those of one save', async () => {
    const dir = join(tmp, 'd')
    await writeFilesAtomically(dir, [file('x.json', 'step 25'), file('state.json', '{"step":25}')])
    writeFileSync(join(dir, 'state.json'), '{"step":20}') // same size, other bytes
    await expect(verifyManifest(dir)).rejects.toThrow(/^.*d: inconsistent checkpoint: state\.json does not match its SHA-256/)
    writeFileSync(join(dir, 'state.json'), '{}')
    await expect(verifyManifest(dir)).rejects.toThrow(/state\.json has 2 bytes, the manifest says 11/)
    writeFileSync(join(dir, MANIFEST_FILE), '{')
    await expect(verifyManifest(dir)).rejects.toThrow(/not valid JSON/)
  })
})

describe('lockDir', () => {
  it("refuses a second writer while the first lives, takes over a dead one's lock with a notice", async () => {
    const dir = join(tmp, 'out')
    const lock = await lockDir(dir, () => {})
    expect(readFileSync(lockPathOf(dir), 'utf8').trim()).toBe(String(process.pid))
    await expect(lockDir(dir, () => {})).rejects.toThrow(new RegExp(`out: in use by another span run \\(pid ${process.pid}`))
    lock.release()
    expect(existsSync(lockPathOf(dir))).toBe(false)
    writeFileSync(lockPathOf(dir), `${deadPid()}\n`)
    const notes: string[] = []
    const again = await lockDir(dir, (l) => notes.push(l))
    expect(notes).toEqual([expect.stringMatching(/took over the stale lock .* \(no longer running\)/)])
    again.release()
  })

  // Under mpirun a rank killed mid-save keeps its lock; where PID 1 reaps no orphans (containers)
  // the rank stays a zombie, which kill(pid, 0) still finds: the next run must take the lock over.
  it.runIf(existsSync('/proc/self/stat'))('takes over the lock of a zombie (an exited process nobody reaped)', async () => {
    const {parent, zombie} = await makeZombie()
    try {
      expect(readFileSync(`/proc/${zombie}/stat`, 'latin1')).toMatch(/\) Z /) // it exists, as a zombie
      expect(pidAlive(zombie)).toBe(false)
      expect(pidAlive(parent.pid as number)).toBe(true)
      const dir = join(tmp, 'zombie-out')
      mkdirSync(dir) // the lock lives inside the directory
      writeFileSync(lockPathOf(dir), `${zombie}\n`)
      const notes: string[] = []
      const lock = await lockDir(dir, (l) => notes.push(l))
      expect(notes).toEqual([expect.stringMatching(new RegExp(`took over the stale lock .* of pid ${zombie} \\(no longer running\\)`))])
      lock.release()
    } finally {
      parent.kill()
    }
  })

  it('refuses a file where the directory should be, before any work', async () => {
    writeFileSync(join(tmp, 'afile'), 'x')
    await expect(lockDir(join(tmp, 'afile'), () => {})).rejects.toThrow(/afile: a file is in the way \(EEXIST\)/)
  })
})

describe('makeDirs', () => {
  it('makes the missing levels, and fails (never spins) under /proc, where recursive mkdir would retry forever', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'span-mkdirs-')), 'a', 'b', 'c')
    await makeDirs(dir)
    expect(existsSync(dir)).toBe(true)
    await makeDirs(dir) // already there: nothing to do
    await expect(makeDirs('/proc/span-no-such-dir/x')).rejects.toMatchObject({code: expect.stringMatching(/^(ENOENT|EACCES|EPERM)$/)})
    const file = join(dir, 'f')
    writeFileSync(file, '')
    await expect(makeDirs(join(file, 'sub'))).rejects.toMatchObject({code: 'ENOTDIR'})
  })
})
