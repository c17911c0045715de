import {existsSync, mkdtempSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {ROOT, runShell} from '../helpers/spawn.js'

// The bundle `npm run bundle` made (tools/bundle.mjs; git-ignored bundle/, so this runs where it
// was built and skips elsewhere): under 40 MB, it carries the three addons (span_native,
// span_dist for MPI, span_cuda) and the cuda kernel sources, and unpacked it runs `doctor` with
// its own Node, which finds the MPI addon (what it says of MPI itself depends on this machine's libmpi).
const TARBALL = join(ROOT, 'bundle', 'span-linux-x64.tar.xz')
const skip = existsSync(TARBALL) ? false : 'no bundle/span-linux-x64.tar.xz (npm run bundle)'

describe.skipIf(skip)('the bundle', () => {
  it('is under 40 MB and holds every addon', () => {
    expect(statSync(TARBALL).size).toBeLessThan(40 * 2 ** 20)
    const list = runShell(`tar -tJf ${TARBALL}`).stdout.split('\n')
    for (const f of [
      'native/build/Release/span_native.node',
      'native/build/Release/span_dist.node',
      'native/cuda/build/Release/span_cuda.node',
      'native/cuda/kernels/adamw_multi.cu',
    ])
      expect(list, f).toContain(`span/${f}`)
  }, 60_000)

  it('unpacked, runs doctor with its own Node and loads the MPI addon', () => {
    const dir = mkdtempSync(join(tmpdir(), 'span-bundle-'))
    const r = runShell(`tar -xJf ${TARBALL} -C ${dir} && env -i PATH=/usr/bin:/bin HOME=${dir} ${dir}/span/bin/span doctor`, {timeout: 120_000})
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^native +ok/m)
    expect(r.stdout).toMatch(/^collectives mpi /m)
    expect(r.stdout).not.toMatch(/span_dist addon is not built/)
    if (existsSync('/usr/lib/x86_64-linux-gnu/libmpi.so.40')) expect(r.stdout).toMatch(/^collectives mpi +ok/m)
  }, 180_000)
})
