import {chmodSync, cpSync, mkdtempSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {basename, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins, scenario} from '../../../helpers/cuda-standins.js'

// The NVRTC stand-in's kernel cache (native/cuda/standin/nvrtc/nvrtc.cc, compile()) is keyed by
// what an object is made of: the program, the prelude's text and the compiler. Not by the folder
// the stand-ins were built in, so that .ci/run's cache outside the clone (SPAN_EMU_CACHE) serves
// the next clean clone; and a compiler that says another version compiles anew.
const s = buildStandins()
const skip = 'error' in s ? ` (skipped: ${s.error})` : ''

/** The cache's objects, name → modification time. */
const objects = (dir: string) => new Map(readdirSync(dir).map((f) => [f, statSync(join(dir, f)).mtimeMs]))

describe.skipIf(skip !== '')(`the NVRTC stand-in's kernel cache${skip}`, () => {
  it('stand-ins built in two folders share one cache; another compiler version misses it', () => {
    if ('error' in s) return
    const tmp = mkdtempSync(join(tmpdir(), 'span-nvrtc-cache-'))
    const cache = join(tmp, 'cache')
    const copy = (name: string) => {
      cpSync(s.dir, join(tmp, name), {recursive: true, filter: (p) => basename(p) !== 'cache'})
      return {...s, dir: join(tmp, name)}
    }
    const a = scenario(copy('a'), 'warp', [], {SPAN_EMU_CACHE: cache})
    const first = objects(cache)
    expect(first.size).toBeGreaterThan(0)
    expect(scenario(copy('b'), 'warp', [], {SPAN_EMU_CACHE: cache})).toEqual(a)
    expect(objects(cache)).toEqual(first) // nothing compiled again, nothing rewritten
    // g++ under another version string: the same text, a new key
    const cxx = join(tmp, 'cxx')
    writeFileSync(cxx, `#!/bin/sh\ncase "$*" in *-dumpfullversion*) echo 99.0.0; exit 0;; esac\nexec g++ "$@"\n`)
    chmodSync(cxx, 0o755)
    expect(scenario(copy('c'), 'warp', [], {SPAN_EMU_CACHE: cache, SPAN_EMU_CXX: cxx})).toEqual(a)
    expect(objects(cache).size).toBe(2 * first.size)
  })
})
