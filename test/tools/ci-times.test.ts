// tools/ci-times.mjs: where a test run's time went, from vitest's JSON report.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
// @ts-expect-error: a plain .mjs tool without types
import {setups, times} from '../../tools/ci-times.mjs'

const file = (name: string, start: number, end: number) => ({name: `/clone/test/${name}.test.ts`, startTime: start * 1000, endTime: end * 1000})

describe('ci-times', () => {
  it('files one after another: one at a time, the gaps between them idle', () => {
    const t = times([file('a', 0, 10), file('b', 12, 20), file('c', 25, 30)])
    expect(t).toMatchObject({wall: 30, sum: 23, maxAtOnce: 1, idle: 7})
    expect(t.concurrency).toEqual([
      [0, 7],
      [1, 23],
    ])
    expect(t.slowest.map((f: {name: string}) => f.name.split('/').pop())).toEqual(['a.test.ts', 'b.test.ts', 'c.test.ts'])
  })

  it('two workers: the seconds with two files at once; a file of no duration counts for none', () => {
    const t = times([file('long', 0, 100), file('x', 0, 40), file('y', 40, 90), file('skipped', 150, 150)])
    expect(t).toMatchObject({wall: 100, sum: 190, maxAtOnce: 2, idle: 0})
    expect(t.concurrency).toEqual([
      [1, 10],
      [2, 90],
    ])
  })

  it("the seconds before each file's first test: the gap on the worker that came free last before it", () => {
    // two workers: a 0–100 and b 5–40 (b's worker idle 0–5), then c starts at 60 on b's worker (20 s of setup)
    const s = setups([file('a', 0, 100), file('b', 5, 40), file('c', 60, 90), file('skipped', 95, 95)], 2)
    expect(s.map((f: {name: string; s: number}) => [f.name.split('/').pop(), f.s])).toEqual([
      ['c.test.ts', 20],
      ['b.test.ts', 5],
      ['a.test.ts', 0],
    ])
    // one worker: each file's gap after the one before it
    expect(setups([file('a', 0, 10), file('b', 12, 20)], 1).map((f: {s: number}) => f.s)).toEqual([2, 0])
  })

  it('prints the summary from a report file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-ci-times-'))
    const report = join(dir, 'r.json')
    writeFileSync(report, JSON.stringify({numTotalTests: 3, testResults: [file('a', 0, 10), file('b', 5, 20)]}))
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'tools', 'ci-times.mjs'), report, '--top', '1'], {encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.split('\n').slice(1, 4)).toEqual([
      "wall 20 s; files' durations summed 25 s; at most 2 files at once",
      'seconds by files running at once: 1: 15, 2: 5',
      '    15.0 s  test/b.test.ts',
    ])
    // b's worker had nothing to run from the start (0 s) until b's first test (5 s)
    expect(r.stdout.split('\n').slice(4, 6)).toEqual([
      "before a file's first test (imports, beforeAll; not in its duration): 5 s in all, the longest:",
      '     5.0 s  test/b.test.ts',
    ])
  })
})
