// The collective watchdog (src/core/dist/watchdog.ts): a rank blocked in a collective past
// SPAN_COLLECTIVE_TIMEOUT says so in one line and ends its process, so the launcher ends the job.
// Here a real process blocks its main thread as MPI would (dist/ must be built).
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {expect, it} from 'vitest'
import {DEFAULT_COLLECTIVE_TIMEOUT_S, collectiveTimeout} from '../../../src/core/dist/watchdog.js'

const root = join(import.meta.dirname, '..', '..', '..')
const watchdogJs = join(root, 'dist', 'core', 'dist', 'watchdog.js')

/** A process whose "collective" blocks its main thread for `blockS` seconds under a `limitS` watchdog. */
function blocked(limitS: number, blockS: number) {
  const script = `
    const {Watchdog} = await import(${JSON.stringify(watchdogJs)})
    const w = new Watchdog(${limitS}, '[rank 1] span pretrain: rank 1 ')
    w.timed('all-reduce', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${blockS * 1000}))
    w.stop()
    console.log('returned')`
  const t0 = Date.now()
  const r = spawnSync('node', ['--input-type=module', '-e', script], {encoding: 'utf8', timeout: 60_000})
  return {...r, secs: (Date.now() - t0) / 1000}
}

it('ends a process blocked in a collective past the limit, in one line naming the rank, the collective and the setting', () => {
  const r = blocked(1, 30)
  expect(r.signal).toBe('SIGKILL')
  expect(r.secs).toBeLessThan(15)
  expect(r.stdout).toBe('')
  expect(r.stderr).toBe(
    '[rank 1] span pretrain: rank 1 waited 1 s in all-reduce for the other ranks (one is hung, stopped or far behind); ending the job (SPAN_COLLECTIVE_TIMEOUT=1)\n',
  )
})

it('leaves alone a collective that returns within the limit, and never keeps the process alive', () => {
  const r = blocked(5, 0.5)
  expect(r.status, r.stderr).toBe(0)
  expect(r.stdout).toBe('returned\n')
  expect(r.secs).toBeLessThan(5) // the watcher thread is unref'd
})

it('reads SPAN_COLLECTIVE_TIMEOUT in seconds, 0 for never; refuses anything else in one line', () => {
  expect(collectiveTimeout({})).toBe(DEFAULT_COLLECTIVE_TIMEOUT_S)
  expect(DEFAULT_COLLECTIVE_TIMEOUT_S).toBe(1800) // PyTorch's default process-group timeout
  expect(collectiveTimeout({SPAN_COLLECTIVE_TIMEOUT: '90'})).toBe(90)
  expect(collectiveTimeout({SPAN_COLLECTIVE_TIMEOUT: '0'})).toBe(0)
  expect(() => collectiveTimeout({SPAN_COLLECTIVE_TIMEOUT: '-1'})).toThrow('SPAN_COLLECTIVE_TIMEOUT=-1: expected seconds ≥ 0 (0: wait for ever)')
  expect(() => collectiveTimeout({SPAN_COLLECTIVE_TIMEOUT: 'soon'})).toThrow(/SPAN_COLLECTIVE_TIMEOUT=soon/)
})
