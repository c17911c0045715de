import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// `SPAN_CUDA_GRAPH=1 span pretrain --backend cuda` on the stand-in device: today's pre-training
// step reads its loss statistics on the host inside the step, so each step declines (the work
// recorded so far is issued, the rest runs eagerly), says why once, and the run's metrics equal a
// run without graphs exactly (docs/cuda-backend.md, "One step as a CUDA Graph").
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

function pretrain(input: string, extra: Record<string, string>): {metrics: string[]; stderr: string} {
  const out = join(mkdtempSync(join(tmpdir(), 'span-cuda-graph-')), 'm')
  const args = ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--max-steps', '2', '--log-every', '1', '--backend', 'cuda']
  const r = runSpan([...args, '--out', out], {input, env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, ...extra}})
  expect(r.code, r.stderr).toBe(0)
  const metrics = r.stdout.split('\n').filter((l) => l.includes('"loss"'))
  return {metrics: metrics.map((l) => l.replace(/"(seconds|tokens_per_s|elapsed)[^,}]*[,}]/g, '')), stderr: r.stderr}
}

describe.skipIf(skip)('SPAN_CUDA_GRAPH=1 span pretrain --backend cuda (stand-in)', () => {
  it('declines the step that reads the device, says why once, and gives the same metrics', () => {
    const input = masked()
    const plain = pretrain(input, {})
    const graphed = pretrain(input, {SPAN_CUDA_GRAPH: '1'})
    expect(graphed.metrics.length).toBe(2)
    expect(graphed.metrics).toEqual(plain.metrics)
    const lines = graphed.stderr.split('\n').filter((l) => l.includes('cuda graph'))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(/cuda graph: a step of shape pretrain batch \d+ ran eagerly: a synchronous read of device memory during the step/)
    expect(plain.stderr).not.toMatch(/cuda graph/)
  })
})
