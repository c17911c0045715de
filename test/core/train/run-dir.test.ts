// modelDir: a checkpoint directory is itself; a run directory means its best/, else (a run
// without dev scoring, e.g. pretrain without --eval) its newest complete checkpoint-STEP/.
import {existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {RUN_MANIFEST, checkOutDir, freshRunDir, modelDir, openRunDir, ownCheckpoints, realPathOf, rotateCheckpoints} from '../../../src/core/train/run-dir.js'

const ckpt = (dir: string) => (mkdirSync(dir, {recursive: true}), writeFileSync(join(dir, 'config.json'), '{}'))

describe('modelDir', () => {
  it('falls back to the newest checkpoint-STEP/ with a config.json (by step, not by name), and says so', () => {
    const run = mkdtempSync(join(tmpdir(), 'span-run-dir-'))
    ckpt(join(run, 'checkpoint-3'))
    ckpt(join(run, 'checkpoint-10'))
    mkdirSync(join(run, 'checkpoint-12')) // incomplete: no config.json
    const notes: string[] = []
    expect(modelDir(run, (l) => notes.push(l))).toBe(join(run, 'checkpoint-10'))
    expect(notes).toEqual([`${run} has no best/ (a run without dev scoring); using its newest checkpoint, ${join(run, 'checkpoint-10')}`])
  })

  it('prefers best/, takes a checkpoint directory as itself, and leaves anything else to the caller', () => {
    const run = mkdtempSync(join(tmpdir(), 'span-run-dir-'))
    ckpt(join(run, 'checkpoint-5'))
    ckpt(join(run, 'best'))
    const notes: string[] = []
    expect(modelDir(run, (l) => notes.push(l))).toBe(join(run, 'best'))
    expect(modelDir(join(run, 'checkpoint-5'), (l) => notes.push(l))).toBe(join(run, 'checkpoint-5'))
    expect(modelDir(join(run, 'missing'), (l) => notes.push(l))).toBe(join(run, 'missing'))
    expect(notes).toEqual([])
  })
})

describe('the run directory of a training run (issue 24.1, 25.2)', () => {
  const tmp = () => mkdtempSync(join(tmpdir(), 'span-run-dir-'))

  it('rotation deletes only the checkpoints the run wrote (span-run.json), kept across a resume', async () => {
    const run = tmp()
    ckpt(join(run, 'checkpoint-1')) // another run's, or the user's: never deleted
    for (const s of [2, 3]) {
      ckpt(join(run, `checkpoint-${s}`))
      await rotateCheckpoints(run, 1, s)
    }
    expect(readdirSync(run).sort()).toEqual(['checkpoint-1', 'checkpoint-3', RUN_MANIFEST])
    expect(await ownCheckpoints(run)).toEqual([3])
    ckpt(join(run, 'checkpoint-4')) // a resumed run reads the manifest and goes on
    await rotateCheckpoints(run, 2, 4)
    ckpt(join(run, 'checkpoint-5'))
    await rotateCheckpoints(run, 2, 5)
    expect(readdirSync(run).sort()).toEqual(['checkpoint-1', 'checkpoint-4', 'checkpoint-5', RUN_MANIFEST])
  })

  it('a corrupt manifest is an error naming it, and deletes nothing', async () => {
    const run = tmp()
    ckpt(join(run, 'checkpoint-1'))
    writeFileSync(join(run, RUN_MANIFEST), '{"checkpoints": "all"}')
    await expect(rotateCheckpoints(run, 1, 2)).rejects.toThrow(/span-run\.json: not a span run manifest/)
    expect(existsSync(join(run, 'checkpoint-1'))).toBe(true)
  })

  it('a fresh directory is never an existing one: two in one second get -2, and the name has its stamp', async () => {
    const base = join(tmp(), 'runs')
    const now = new Date(2026, 10, 26, 9, 5, 7)
    const a = await freshRunDir('pretrain', base, now)
    const b = await freshRunDir('pretrain', base, now)
    expect(a).toBe(join(base, 'pretrain-20261126-090507'))
    expect(b).toBe(join(base, 'pretrain-20261126-090507-2'))
    expect(statSync(b).isDirectory()).toBe(true)
  })

  it('--out is never the root, nor --init (real paths: links, ./, trailing slashes), nor inside it', () => {
    const d = tmp()
    mkdirSync(join(d, 'pt'))
    symlinkSync(join(d, 'pt'), join(d, 'link'))
    expect(() => checkOutDir('/', null)).toThrow(/--out \/: the root directory cannot hold a run/)
    expect(() => checkOutDir(join(d, 'link/'), join(d, './pt'))).toThrow(/are the same place/)
    expect(() => checkOutDir(join(d, 'link', 'ft'), join(d, 'pt'))).toThrow(/are the same place/)
    expect(() => checkOutDir(join(d, 'ft'), join(d, 'pt'))).not.toThrow()
    expect(realPathOf(join(d, 'link', 'a', 'b'))).toBe(join(realpathSync(d), 'pt', 'a', 'b'))
  })

  it('a new run refuses a directory that holds anything but its lock, and removes an empty one it made when it ends', async () => {
    const d = tmp()
    const out = join(d, 'run')
    mkdirSync(out)
    writeFileSync(join(out, 'notes.txt'), 'mine')
    const o = {kind: 'pretrain', resume: null, init: null, log: () => {}}
    await expect(openRunDir({...o, out})).rejects.toThrow(/run: not empty \(notes\.txt\); a new run needs a new or empty directory/)
    expect(readdirSync(out)).toEqual(['notes.txt'])
    const resumed = await openRunDir({...o, out, resume: out})
    resumed.release()
    const fresh = await openRunDir({...o, out: join(d, 'new')})
    expect(readdirSync(join(d, 'new'))).toEqual(['.span.lock'])
    fresh.release()
    expect(existsSync(join(d, 'new'))).toBe(false)
  })
})
