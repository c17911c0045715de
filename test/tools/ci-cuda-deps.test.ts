import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {CUDA118_INCLUDE, NVRTC} from '../helpers/cuda-toolchain.js'

// tools/ci-cuda-deps.sh installs Debian's NVRTC 11.8 and extracts the 11.8 headers (it runs in
// CI before the tests; it is not run here to install anything). Where they are already there, a
// second run is a quick no-op that says so: what CI sees on a machine that kept them.
const script = join(import.meta.dirname, '..', '..', 'tools', 'ci-cuda-deps.sh')
const isRoot = process.getuid?.() === 0
const why = !isRoot ? 'not root' : !NVRTC || !CUDA118_INCLUDE ? 'NVRTC 11.8 or the 11.8 headers absent (the script would install them)' : null

describe('tools/ci-cuda-deps.sh', () => {
  it.skipIf(why !== null)(`is idempotent: with everything there it installs nothing and says so${why ? ` (skipped: ${why})` : ''}`, () => {
    const r = spawnSync('sh', [script], {encoding: 'utf8', env: {...process.env, SPAN_CUDA118_DIR: join(CUDA118_INCLUDE ?? '', '..')}})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toMatch(/^ci-cuda-deps: NVRTC 11\.8 and the CUDA 11\.8 headers \(.*\/include\) already there$/m)
    // NVRTC 13's venv (issue 35's sm_75 check) comes first: where it is there too, that line says so as well
    expect(
      r.stdout
        .trim()
        .split('\n')
        .filter((l) => !/already (there|in )/.test(l) && !/could not install NVRTC 13/.test(l)),
    ).toEqual([])
  })
})
