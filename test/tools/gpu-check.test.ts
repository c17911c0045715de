import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../helpers/cuda-standins.js'
import {ROOT, runShell} from '../helpers/spawn.js'

// tools/gpu-check.sh's dry run (SPAN_GPU_CHECK_DRY=1) on the stand-ins: it completes, every step
// that needs no GPU, CUDA headers or PyTorch runs and passes, the others are skipped with a
// reason, and $OUT holds the log and a valid summary.json.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

describe.skipIf(skip)('tools/gpu-check.sh dry run on the stand-ins', () => {
  it('completes and writes a valid summary', () => {
    const out = mkdtempSync(join(tmpdir(), 'span-gpu-check-'))
    const env = {...process.env, SPAN_GPU_CHECK_DRY: '1', OUT: out, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, SPAN_GPU_CARRY: join(out, 'none')}
    const r = runShell(`bash ${join(ROOT, 'tools', 'gpu-check.sh')}`, {env, timeout: 240_000})
    expect(r.code, r.stdout + r.stderr).toBe(0)
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8'))
    expect(summary.dry_run).toBe(true)
    const status = Object.fromEntries(summary.steps.map((s: {name: string; status: string}) => [s.name, s.status]))
    expect(status).toMatchObject({
      doctor: 'ok',
      selftest: 'ok',
      cublaslt: 'ok',
      tiny_step: 'ok',
      memory: 'ok',
      bf16_vs_fp32: 'ok',
      fp16_vs_fp32: 'ok',
      fp16_vs_bf16: 'ok',
      graph_0: 'ok',
      graph_1: 'ok',
      graph_equal: 'ok',
      bench: 'skipped',
    })
    expect(summary.memory.flat).toBe(true)
    for (const s of summary.steps) if (s.status === 'skipped') expect(s.detail).not.toBe('')
    expect(readFileSync(join(out, 'gpu-check.log'), 'utf8')).toMatch(/selftest: all \d+ passed/)
  }, 300_000)
})
