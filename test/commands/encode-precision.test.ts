// `span encode --compute-precision` through `bin/run.js` (oclif; dist/ must be built): encode's
// --precision stays its output digits, and the matrix products' precision, every other command's
// --precision, is --compute-precision there: cuda only for tf32, bf16 on cuda and on native where the
// CPU has bf16 dot products (a usage error naming that flag elsewhere); on the cuda stand-in and on
// native it reaches the products (bf16 vectors differ from fp32 ones by bf16's rounding, fp32 equals
// the CPU's, native's bf16 equals the stand-in's).
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../src/core/engine/index.js'
import {saveCheckpoint} from '../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../src/core/model/pretraining.js'
import {smallConfig} from '../core/model/helpers.js'
import {fixtureVocab, writeBlocks} from '../core/train/helpers.js'
import {buildStandins} from '../helpers/cuda-standins.js'
import {runSpan} from '../helpers/spawn.js'

const tmp = mkdtempSync(join(tmpdir(), 'span-encode-precision-'))
const ckpt = join(tmp, 'ckpt')
const blocks = join(tmp, 'blocks.ndjson')
const standins = buildStandins()

beforeAll(async () => {
  await initBackend('cpu')
  const model = SpanBertForPreTraining.init(smallConfig({vocab_size: fixtureVocab.tokens.length, max_position_embeddings: 40}), 3)
  await saveCheckpoint(ckpt, model, fixtureVocab.info.path)
  model.dispose()
  writeBlocks(blocks, 3, 7)
})

/** The pooled vectors of `span encode` with these flags (a run that must succeed). */
function vectors(args: string[], env?: NodeJS.ProcessEnv): number[][] {
  const r = runSpan(['encode', blocks, '--model', ckpt, '--pool', 'mean', '--precision', '9', ...args], {env})
  expect(r.code, r.stderr).toBe(0)
  return r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => (JSON.parse(l) as {vector: number[]}).vector)
}
const maxDiff = (a: number[][], b: number[][]) => Math.max(...a.flatMap((row, i) => row.map((x, j) => Math.abs(x - b[i][j]))))
const norm = (v: number[]) => Math.hypot(...v)
/** The largest ‖a − b‖ / ‖b‖ over the vectors. */
const relDiff = (a: number[][], b: number[][]) => Math.max(...a.map((row, i) => norm(row.map((x, j) => x - b[i][j])) / norm(b[i])))
const BF16_CPU = {...process.env, SPAN_CPU_FLAGS: 'avx512_bf16'} // a CPU with bf16 dot products (docs/precision.md)

describe('span encode --compute-precision', () => {
  it('is a usage error naming itself for tf32/bf16 on a CPU backend; fp32 is accepted, --precision stays digits', () => {
    const r = runSpan(['encode', '--model', ckpt, '--backend', 'native', '--compute-precision', 'bf16'], {
      input: '',
      env: {...process.env, SPAN_CPU_FLAGS: 'avx2'},
    }) // a CPU without bf16 dot products
    expect([r.code, r.stderr]).toEqual([
      2,
      'span encode: --compute-precision bf16 needs --backend cuda, or native on a CPU with bf16 dot products; --backend native computes in fp32 only on this CPU (no bf16 dot products): see span doctor\n',
    ])
    const bad = runSpan(['encode', '--model', ckpt, '--backend', 'native', '--compute-precision', 'fp16'], {input: ''})
    expect(bad.code).toBe(2)
    const digits = runSpan(['encode', blocks, '--model', ckpt, '--pool', 'cls', '--precision', '2', '--backend', 'native', '--compute-precision', 'fp32'])
    expect(digits.code, digits.stderr).toBe(0)
    for (const x of (JSON.parse(digits.stdout.split('\n')[0]) as {vector: number[]}).vector)
      expect(
        String(Math.abs(x))
          .replace(/^0\.0*|\./g, '')
          .replace(/e.*$/, '').length,
      ).toBeLessThanOrEqual(2)
  })

  it("reaches native's products where the CPU has bf16 dot products: bf16 within 1e-2 of fp32 (relative, per vector), and equal to the cuda stand-in's bf16", () => {
    const fp32 = vectors(['--backend', 'native', '--compute-precision', 'fp32'], BF16_CPU)
    const bf16 = vectors(['--backend', 'native', '--compute-precision', 'bf16'], BF16_CPU)
    expect(vectors(['--backend', 'native'], {...BF16_CPU, SPAN_NATIVE_PRECISION: undefined})).toEqual(bf16) // the default there
    expect(maxDiff(bf16, fp32)).toBeGreaterThan(0)
    expect(relDiff(bf16, fp32)).toBeLessThan(1e-2)
    if ('error' in standins) return
    // native's kernel that saves probs against cuda's simple path: both round P = softmax(S). The flash
    // kernels round each block's unnormalised exp(S − m) instead, with blocks of 64 keys on native and
    // 32 on cuda's wmma kernel, so they agree only to bf16's own error (docs/precision.md)
    const cuda = vectors(['--backend', 'cuda', '--compute-precision', 'bf16'], {...process.env, SPAN_CUDA_LIBS: standins.dir, SPAN_CUDA_FLASH_ATTENTION: '0'})
    const probs = vectors(['--backend', 'native', '--compute-precision', 'bf16'], {...BF16_CPU, SPAN_NATIVE_FLASH_ATTENTION: '0'})
    expect(relDiff(cuda, probs)).toBeLessThan(relDiff(bf16, fp32) / 10)
  })

  it.skipIf('error' in standins)('reaches the cuda products: fp32 equals native, bf16 differs by its rounding', () => {
    const env = {...process.env, SPAN_CUDA_LIBS: (standins as {dir: string}).dir}
    const native = vectors(['--backend', 'native'])
    const fp32 = vectors(['--backend', 'cuda', '--compute-precision', 'fp32'], env)
    const bf16 = vectors(['--backend', 'cuda', '--compute-precision', 'bf16'], env)
    expect(maxDiff(fp32, native)).toBeLessThan(1e-5)
    expect(maxDiff(bf16, fp32)).toBeGreaterThan(0)
    expect(maxDiff(bf16, fp32)).toBeLessThan(0.05)
  })
})
