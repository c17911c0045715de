import {spawnSync} from 'node:child_process'
import {mkdirSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT, buildStandins} from '../../../helpers/cuda-standins.js'

// The libcuda stand-in's stream capture driven through abi.h's prototypes (capture-harness.cc):
// work on a capturing stream is recorded, not run; a launch of the graph runs it with the values
// of capture time (pinned host memory read at launch); what the driver refuses during a GLOBAL
// capture (a synchronous copy, a stream synchronisation, an allocation, pageable host memory in
// a captured copy) fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

describe.skipIf(skip)('stream capture on the libcuda stand-in', () => {
  it('records, replays, and refuses what the driver refuses', () => {
    const dir = (standins as {dir: string}).dir
    const exe = join(dirname(dir), 'standin-tests', `capture-harness-${process.pid}`)
    mkdirSync(dirname(exe), {recursive: true})
    const cc = spawnSync('g++', ['-std=c++17', '-O1', join(ROOT, 'test', 'native', 'cuda', 'standin', 'capture-harness.cc'), '-o', exe, '-ldl'], {
      encoding: 'utf8',
    })
    expect(cc.stderr).toBe('')
    const r = spawnSync(exe, [dir], {encoding: 'utf8', env: {...process.env, SPAN_STANDIN_QUIET: '1'}})
    const got = JSON.parse(r.stdout) as Record<string, number>
    expect(got).toMatchObject({begin: 0, memsetCaptured: 0, h2dPinnedCaptured: 0, statusActive: 1, end: 0, instantiate: 0, launch: 0})
    expect(got.afterCapture).toBe(1) // the captured memset did not run
    expect([got.replayFirst, got.replayRest]).toEqual([9, 5]) // the staging word as it is at launch; the memset's value of capture time
    expect(got.graphLaunches).toBe(1)
    for (const op of ['syncCopy', 'streamSync', 'alloc', 'pageableH2D']) {
      expect([op, got[op], got[`${op}Status`], got[`${op}End`]]).toEqual([op, 900, 2, 901]) // refused, invalidated, EndCapture fails
    }
    expect(got.relaxedAlloc).toBe(0) // RELAXED permits it
    expect(got.capturedEventQuery).toBe(907) // CUDA_ERROR_CAPTURED_EVENT
    expect(got.relaxedEnd).toBe(0)
    expect(got.legacyStream).toBe(900)
  })
})
