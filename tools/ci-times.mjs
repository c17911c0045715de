#!/usr/bin/env node
// Where a test run's time went, from vitest's JSON report (.ci/run writes .vitest-report.json):
// the run's wall time, the files' summed durations, how many files ran at once (the workers that
// were busy: 1 everywhere means the files ran one after another), the time no file was running
// (imports, collection, hooks between files), and the slowest files. A file's duration in the
// report spans its tests only: its imports and beforeAll hooks come before its first test, as the
// gap its worker had before it; the longest of those gaps are listed too.
//   node tools/ci-times.mjs [REPORT] [--top N]
import {readFileSync} from 'node:fs'

/**
 * The figures of a report's testResults ({name, startTime, endTime} in ms): wall, summed file
 * time, the largest number of files running at once and the seconds at each count, the seconds
 * with no file running, and the files by duration, longest first. Files of no duration are left
 * out of the overlap count (vitest gives a file whose tests all skip start = end).
 */
export function times(results) {
  const files = results.map((r) => ({name: r.name, start: r.startTime, end: r.endTime, s: (r.endTime - r.startTime) / 1000}))
  const timed = files.filter((f) => f.end > f.start)
  const start = Math.min(...timed.map((f) => f.start)) // spread-ok: one number per test file
  const end = Math.max(...timed.map((f) => f.end)) // spread-ok: one number per test file
  const events = timed.flatMap((f) => [
    [f.start, 1],
    [f.end, -1],
  ])
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]) // an end before a start at the same instant
  const at = new Map() // files running at once → seconds
  let running = 0
  let last = start
  for (const [t, d] of events) {
    at.set(running, (at.get(running) ?? 0) + (t - last) / 1000)
    running += d
    last = t
  }
  const concurrency = [...at].filter(([, s]) => s > 0).sort((a, b) => a[0] - b[0])
  return {
    wall: (end - start) / 1000,
    sum: files.reduce((a, f) => a + f.s, 0),
    maxAtOnce: Math.max(0, ...concurrency.map(([n]) => n)), // spread-ok: one number per count of files at once
    concurrency,
    idle: at.get(0) ?? 0,
    slowest: [...files].sort((a, b) => b.s - a.s),
  }
}

/**
 * The seconds before each file's first test on its worker (its imports and beforeAll hooks, which
 * its duration leaves out): the files laid on `lanes` workers in order of start, each on the worker
 * that came free last before it started; longest first. An estimate: the report names no worker.
 */
export function setups(results, lanes) {
  const files = results.filter((r) => r.endTime > r.startTime).sort((a, b) => a.startTime - b.startTime)
  const free = Array.from({length: Math.max(1, lanes)}, () => Math.min(...files.map((f) => f.startTime))) // spread-ok: one number per test file
  const out = files.map((f) => {
    let lane = -1
    for (let i = 0; i < free.length; i++) if (free[i] <= f.startTime && (lane < 0 || free[i] > free[lane])) lane = i
    if (lane < 0) lane = free.indexOf(Math.min(...free)) // spread-ok: one number per worker
    const s = Math.max(0, f.startTime - free[lane]) / 1000
    free[lane] = Math.max(free[lane], f.endTime)
    return {name: f.name, s}
  })
  return out.sort((a, b) => b.s - a.s)
}

function main() {
  const args = process.argv.slice(2)
  const top = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 15
  const file = args.find((a, i) => !a.startsWith('--') && args[i - 1] !== '--top') ?? '.vitest-report.json'
  const report = JSON.parse(readFileSync(file, 'utf8'))
  const t = times(report.testResults)
  console.log(`${file}: ${report.testResults.length} files, ${report.numTotalTests} tests`)
  console.log(`wall ${t.wall.toFixed(0)} s; files' durations summed ${t.sum.toFixed(0)} s; at most ${t.maxAtOnce} files at once`)
  console.log(`seconds by files running at once: ${t.concurrency.map(([n, s]) => `${n}: ${s.toFixed(0)}`).join(', ')}`)
  const short = (name) => name.replace(/^.*?\/(?=test\/)/, '')
  for (const f of t.slowest.slice(0, top)) console.log(`${f.s.toFixed(1).padStart(8)} s  ${short(f.name)}`)
  const before = setups(report.testResults, t.maxAtOnce)
  const total = before.reduce((a, f) => a + f.s, 0)
  console.log(`before a file's first test (imports, beforeAll; not in its duration): ${total.toFixed(0)} s in all, the longest:`)
  for (const f of before.slice(0, Math.min(top, 5))) console.log(`${f.s.toFixed(1).padStart(8)} s  ${short(f.name)}`)
}

if (import.meta.url === `file://${process.argv[1]}`) main()
