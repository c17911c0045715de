import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

// tools/check-nccl-abi.sh, the check of native/cuda/src/nccl-abi.h against a REAL nccl.h: run
// where one is found ($NCCL_HOME/include, or pip's nvidia-nccl-cu12 wheel), never against a
// header written here (that would pass vacuously). tools/gpu-check.sh runs it on the GPU machine.
const root = join(import.meta.dirname, '..', '..')
const script = join(root, 'tools', 'check-nccl-abi.sh')
const HAS_CC = spawnSync('cc', ['--version']).status === 0
const wheel = spawnSync('python3', ['-c', 'import nvidia; print(*nvidia.__path__)'], {encoding: 'utf8'}).stdout?.trim().split(' ').filter(Boolean) ?? []
const ncclInclude = [process.env.NCCL_HOME ? join(process.env.NCCL_HOME, 'include') : '', ...wheel.map((w) => join(w, 'nccl', 'include'))].find(
  (d) => d && existsSync(join(d, 'nccl.h')),
)

describe.skipIf(!HAS_CC)('tools/check-nccl-abi.sh without nccl.h', () => {
  it('exits 2 with one line saying where to get it', () => {
    const r = spawnSync('sh', [script, '-I/nonexistent'], {encoding: 'utf8', env: {...process.env, NCCL_HOME: ''}})
    if (ncclInclude) return // found through the default search after all: the other block checks it
    expect(r.status).toBe(2)
    expect(r.stderr.trim()).toMatch(/^check-nccl-abi: nccl\.h not found \(pip install nvidia-nccl-cu12/)
    expect(r.stderr.trim().split('\n')).toHaveLength(1)
  })
})

describe.skipIf(!HAS_CC || !ncclInclude)(
  `tools/check-nccl-abi.sh on a real nccl.h${ncclInclude ? '' : ' (skipped: no nccl.h: NCCL_HOME or pip install nvidia-nccl-cu12)'}`,
  () => {
    it('finds every constant, size and prototype of nccl-abi.h the same, and a wrong prototype not', () => {
      const ok = spawnSync('sh', [script, `-I${ncclInclude}`], {encoding: 'utf8'})
      expect(ok.status, ok.stdout + ok.stderr).toBe(0)
      expect(ok.stdout).toContain('ok prototype ncclAllReduce')
      const bad = join(mkdtempSync(join(tmpdir(), 'span-nccl-abi-')), 'nccl-abi.h')
      writeFileSync(
        bad,
        readFileSync(join(root, 'native', 'cuda', 'src', 'nccl-abi.h'), 'utf8').replace(
          'int nranks, SPAN_ncclUniqueId commId',
          'int nranks, SPAN_ncclUniqueId* commId',
        ),
      )
      const r = spawnSync('sh', [script, `-I${ncclInclude}`], {encoding: 'utf8', env: {...process.env, SPAN_NCCL_ABI_H: bad}})
      expect(r.status).toBe(1)
      expect(r.stderr).toContain('the prototype of ncclCommInitRank differs from nccl.h')
    })
  },
)
