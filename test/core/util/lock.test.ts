// A command that fails after locking its --out must not keep the lock: in one process (tests,
// a library user) the next run into that directory would otherwise be refused as "in use".
import {existsSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {runCommand} from '@oclif/test'
import {expect, it} from 'vitest'
import {holdsLock, lockDir, lockPathOf, releaseAllLocks} from '../../../src/core/util/lock.js'

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
