// A command that fails after locking its --out must not keep the lock: in one process (tests,
// a library user) the next run into that directory would otherwise be refused as "in use".
import {existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runCommand} from '@oclif/test'
import {expect, it} from 'vitest'
import {LOCK_FILE, holdsLock, lockDir, lockPathOf, releaseAllLocks} from '../../../src/core/util/lock.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-lock-'))

it('releaseAllLocks frees every lock this process holds', async () => {
  const a = join(tmp, 'a')
  const b = join(tmp, 'b')
  await lockDir(a, () => {})
  await lockDir(b, () => {})
  expect(holdsLock(a) && holdsLock(b)).toBe(true)
  releaseAllLocks()
  expect(holdsLock(a) || holdsLock(b)).toBe(false)
  expect(existsSync(lockPathOf(a)) || existsSync(lockPathOf(b))).toBe(false)
})

it('a command that fails after taking its lock leaves none behind', async () => {
  const out = join(tmp, 'run')
  const {stderr} = await runCommand(['finetune', 'nli', '--preset', 'tiny', '--train', join(tmp, 'absent.jsonl'), '--out', out], {
    root: join(import.meta.dirname, '..', '..', '..'),
  })
  process.exitCode = undefined // the failing command set it; the runner must not inherit it
  expect(stderr).toMatch(/absent\.jsonl/)
  expect(holdsLock(out)).toBe(false)
  expect(existsSync(lockPathOf(out))).toBe(false)
})

// Issue 25.3: the lock is keyed on the directory's real path, and what is in its way is said in span's words.
it('a directory and a symbolic link to it share one lock', async () => {
  const same = join(tmp, 'same')
  mkdirSync(same)
  symlinkSync(same, join(tmp, 'alias'))
  const lock = await lockDir(same, () => {})
  await expect(lockDir(join(tmp, 'alias/'), () => {})).rejects.toThrow(new RegExp(`alias/: in use by another span run \\(pid ${process.pid}`))
  await expect(lockDir(join(tmp, './alias/../same'), () => {})).rejects.toThrow(/in use by another span run/)
  expect(holdsLock(join(tmp, 'alias'))).toBe(true)
  lock.release()
})

it('a directory where the lock file goes is an error in one line, and no temporary is left', async () => {
  const dir = join(tmp, 'blocked')
  mkdirSync(join(dir, LOCK_FILE), {recursive: true})
  await expect(lockDir(dir, () => {})).rejects.toThrow(/blocked\/\.span\.lock: in the way of span's lock file \(not a regular file\); remove it/)
  expect(readdirSync(dir)).toEqual([LOCK_FILE])
})
