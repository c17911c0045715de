/**
 * vitest globalSetup: every test file's temporary folders (and those of the span processes the
 * tests start, which inherit TMPDIR) go under one root made for this run, removed at its end, so
 * that `npm test` leaves nothing in the system's temporary folder.
 */
import {chmodSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'span-test-'))
  chmodSync(root, 0o1777) // like /tmp: tests that run a child as another user still reach their folders
  process.env.TMPDIR = root
  return () => rmSync(root, {recursive: true, force: true, maxRetries: 3})
}
