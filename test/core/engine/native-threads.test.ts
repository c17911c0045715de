import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'
import type {NativeAddon} from '../../../src/core/engine/native-kernels.js'
import {addonPath, loadNative, nativeAddon} from '../../../src/core/engine/native.js'

// The addon's thread pool (native/src/pool.cc): chunks claimed dynamically, workers that spin before
// they sleep. poolCheck (native/src/pool_check.cc) makes thousands of parallel_for calls of random
// sizes and grains, back to back, after short gaps and after pauses long enough for the workers to
// sleep, and counts how often each index ran; then one run on every thread, which must have all of
// them inside at once (the peak measurement depends on it).
const status = loadNative()
const reason = status.available ? '' : ` (skipped: ${status.error})`
const addon = (): NativeAddon => nativeAddon() as NativeAddon

/**
 * A script over the addon in a fresh node process (the spin window is read once per process, and a
 * pool that hangs blocks the process: the child's timeout turns that into a failure): its JSON output.
 */
function inChild(env: Record<string, string>, body: string): unknown {
  const script = `const m = {exports: {}}; process.dlopen(m, ${JSON.stringify(addonPath())}); const a = m.exports; ${body}`
  const r = spawnSync(process.execPath, ['-e', script], {env: {...process.env, ...env}, encoding: 'utf8', timeout: 60_000})
  expect(r.signal, 'the pool hung (killed after 60 s)').toBeNull()
  expect(r.status, r.stderr).toBe(0)
  return JSON.parse(r.stdout) as unknown
}

const check = (threads: number) => `a.setThreads(${threads}); console.log(JSON.stringify(a.poolCheck(1500, 7)))`

describe.skipIf(!status.available)(`the native thread pool${reason}`, () => {
  it('runs every index of every job exactly once, in at most one chunk per thread, on all its threads', () => {
    const threads = status.threads
    const r = addon().poolCheck!(3000, 1)
    expect(r).toMatchObject({jobs: 3000, missing: 0, repeated: 0, overlong: 0, allAtOnce: true})
    expect(r.threadsSeen).toBeGreaterThanOrEqual(1)
    expect(r.threadsSeen).toBeLessThanOrEqual(threads)
  })

  it('keeps working when the thread count changes between jobs (a new worker does not take an old job)', () => {
    // peakAll first: every thread's part at once, the new workers' included, right after they start
    const body = `const out = []; for (const n of [3, 1, 4, 2]) { a.setThreads(n); const p = a.peakAll();
      out.push({n, peakThreads: p.threads, ...a.poolCheck(400, n)}) } console.log(JSON.stringify(out))`
    for (const r of inChild({}, body) as Array<Record<string, number>>) {
      expect(r, `threads ${r.n}`).toMatchObject({peakThreads: r.n, jobs: 400, missing: 0, repeated: 0, overlong: 0, allAtOnce: true})
      expect(r.threadsSeen).toBeLessThanOrEqual(r.n)
    }
  })

  it('is exact with spinning off and with a long spin window (SPAN_POOL_SPIN_US)', () => {
    for (const spin of ['0', '5000']) {
      const r = inChild({SPAN_POOL_SPIN_US: spin}, check(3))
      expect(r, `SPAN_POOL_SPIN_US=${spin}`).toMatchObject({jobs: 1500, missing: 0, repeated: 0, overlong: 0, allAtOnce: true})
    }
  })

  it('is exact with more threads than cores (workers descheduled while the caller claims their chunks)', () => {
    const r = inChild({}, check(8))
    expect(r).toMatchObject({jobs: 1500, missing: 0, repeated: 0, overlong: 0, allAtOnce: true})
  })
})
