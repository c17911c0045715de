import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../../../helpers/cuda-standins.js'
import {runSpan} from '../../../helpers/spawn.js'

// `span pretrain --backend cuda` as a process on the stand-in device: three steps with dropout
// on give the losses and gradient norms of `--backend native`: span's fused kernels run as CUDA C
// (src/core/engine/cuda/kernels-fused.ts) and draw native's dropout masks (SplitMix64 of seed and
// index), where `--backend cpu`'s composite formulas draw tf.dropout's.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

type Rec = {loss: number; grad_norm: number; peak_device_bytes?: number}

function pretrain(backend: string, input: string, extra: Record<string, string> = {}): Rec[] {
  const out = join(mkdtempSync(join(tmpdir(), 'span-cuda-pretrain-')), 'm')
  const args = ['pretrain', '--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--max-steps', '3', '--log-every', '1']
  const r = runSpan([...args, '--backend', backend, '--out', out], {input, env: {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, ...extra}})
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
    .split('\n')
    .filter((l) => l.includes('"loss"'))
    .map((l) => JSON.parse(l) as Rec)
}

describe.skipIf(skip)('span pretrain --backend cuda (stand-in)', () => {
  it('SPAN_CUDA_DEVICE picks the GPU: device 1 of 2 starts, device 2 is the driver error in one line', () => {
    const env = {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, SPAN_STANDIN_DEVICES: '2'}
    const ok = runSpan(['doctor', '--json'], {env: {...env, SPAN_CUDA_DEVICE: '1'}})
    expect(JSON.parse(ok.stdout.split('\n')[0])).toMatchObject({backend: 'cuda', available: true})
    const bad = runSpan(['doctor', '--json'], {env: {...env, SPAN_CUDA_DEVICE: '2'}})
    expect(JSON.parse(bad.stdout.split('\n')[0])).toMatchObject({backend: 'cuda', available: false, detail: 'device 2: CUDA_ERROR_INVALID_DEVICE (2 found)'})
  })

  // SPAN_STANDIN_DEFER=1: stream work runs only at synchronisations, so a host read that forgot one sees stale data.
  it('three steps give the native backend’s losses and gradient norms, with the stand-in deferring stream work', () => {
    const input = masked()
    const [cpu, cuda] = [pretrain('native', input), pretrain('cuda', input, {SPAN_STANDIN_DEFER: '1'})]
    expect(cuda.length).toBeGreaterThan(0)
    expect(cuda.length).toBe(cpu.length)
    cuda.forEach((s, i) => {
      expect(Math.abs(s.loss - cpu[i].loss) / cpu[i].loss).toBeLessThan(1e-4)
      expect(Math.abs(s.grad_norm - cpu[i].grad_norm) / cpu[i].grad_norm).toBeLessThan(1e-4)
      // the caching allocator's peak of the step, on cuda only (docs/formats.md)
      expect(Number.isInteger(s.peak_device_bytes) && s.peak_device_bytes! > 0, JSON.stringify(s)).toBe(true)
      expect(cpu[i]).not.toHaveProperty('peak_device_bytes')
    })
  })
})
