import {mkdtempSync, readFileSync, readdirSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {buildStandins} from '../helpers/cuda-standins.js'
import {runSpan} from '../helpers/spawn.js'

// --device and --precision (src/cli/backend-flags.ts) through `bin/run.js`: usage errors on the CPU
// backends, and on the stand-in cuda device the flag beats SPAN_CUDA_DEVICE and pretrain's
// resolved config keeps both.
const standins = buildStandins()
const skip = 'error' in standins ? standins.error : false
const TINY = ['--preset', 'tiny', '--layers', '1', '--hidden', '16', '--heads', '2', '--max-steps', '1', '--log-every', '1']

function masked(): string {
  return ['tokenize', 'block', 'mask'].reduce(
    (input, cmd) => runSpan(cmd === 'tokenize' ? [cmd] : [cmd, ...(cmd === 'block' ? ['--len', '16'] : ['--seed', '1'])], {input}).stdout,
    'the union is strong\n',
  )
}

const outDir = () => join(mkdtempSync(join(tmpdir(), 'span-backend-flags-')), 'm')

describe('--device and --precision on a CPU backend', () => {
  it.each([
    [['--backend', 'native', '--precision', 'tf32'], '--precision tf32 needs --backend cuda; --backend native computes in fp32 or bf16', 'avx512_bf16'],
    [
      ['--backend', 'native', '--precision', 'tf32'],
      '--precision tf32 needs --backend cuda; --backend native computes in fp32 only on this CPU (no bf16 dot products): see span doctor',
      'avx2',
    ],
    [['--backend', 'cpu', '--device', '0'], '--device 0 needs --backend cuda; --backend cpu has no devices or precisions', 'avx512_bf16'],
  ])('pretrain %j is a usage error in one line, and writes nothing (CPU flags %#)', (flags, why, cpu) => {
    const out = outDir()
    const r = runSpan(['pretrain', ...TINY, ...flags, '--out', out], {input: masked(), env: {...process.env, SPAN_CPU_FLAGS: cpu}})
    expect(r.code).toBe(2)
    expect(r.stderr).toBe(`span pretrain: ${why}\n`)
    expect(existsSync(out)).toBe(false)
  })

  it('--precision fp32 is what the CPU backends compute: accepted', () => {
    const r = runSpan(['pretrain', ...TINY, '--backend', 'native', '--precision', 'fp32', '--out', outDir()], {input: masked()})
    expect(r.code, r.stderr).toBe(0)
  })

  it('finetune squad and encode refuse --device on native the same way', () => {
    const squad = runSpan([
      'finetune',
      'squad',
      '--preset',
      'tiny',
      '--train',
      'fixtures/squad-demo/train.json',
      '--out',
      outDir(),
      '--backend',
      'native',
      '--device',
      '1',
    ])
    expect([squad.code, squad.stderr]).toEqual([2, 'span finetune squad: --device 1 needs --backend cuda; --backend native has no devices\n'])
    const enc = runSpan(['encode', '--model', 'fixtures/golden', '--backend', 'native', '--device', '0'], {input: ''})
    expect(enc.code, enc.stderr).toBe(2)
    expect(enc.stderr).toMatch(/^span encode: --device 0 needs --backend cuda;[^\n]*\n$/)
  })
})

describe.skipIf(skip)('--device and --precision on the cuda stand-in', () => {
  const env = {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir, SPAN_STANDIN_DEVICES: '2'}

  it('--device 1 beats SPAN_CUDA_DEVICE=2, and the resolved config saves device and precision', () => {
    const out = outDir()
    const r = runSpan(['pretrain', ...TINY, '--backend', 'cuda', '--device', '1', '--precision', 'tf32', '--out', out], {
      input: masked(),
      env: {...env, SPAN_CUDA_DEVICE: '2'},
    })
    expect(r.code, r.stderr).toBe(0)
    const ckpt = readdirSync(out).find((d) => d.startsWith('checkpoint-'))!
    expect(JSON.parse(readFileSync(join(out, ckpt, 'train_config.json'), 'utf8'))).toMatchObject({backend: 'cuda', device: 1, precision: 'tf32'})
  })

  it('--precision reaches the matrix products: tf32 rounds them (losses differ from fp32, within 1e-4)', () => {
    const loss = (precision: string) => {
      const r = runSpan(['pretrain', ...TINY, '--backend', 'cuda', '--precision', precision, '--out', outDir()], {input: masked(), env})
      expect(r.code, r.stderr).toBe(0)
      return (JSON.parse(r.stdout.split('\n').find((l) => l.includes('"loss"'))!) as {loss: number}).loss
    }
    const [fp32, tf32] = [loss('fp32'), loss('tf32')]
    expect(tf32).not.toBe(fp32)
    expect(Math.abs(tf32 - fp32) / fp32).toBeLessThan(1e-4)
  })

  it('--device 2 of 2 is the driver error in one line', () => {
    const r = runSpan(['pretrain', ...TINY, '--backend', 'cuda', '--device', '2', '--out', outDir()], {input: masked(), env})
    expect(r.code).toBe(1)
    expect(r.stderr).toBe('span pretrain: --backend cuda is not available: device 2: CUDA_ERROR_INVALID_DEVICE (2 found)\n')
  })
})
