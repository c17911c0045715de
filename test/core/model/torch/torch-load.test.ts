// pytorch_model.bin read without Python: fixtures/torch/ was written by Debian's PyTorch 1.13
// (tools/make-torch-fixtures.py), with PyTorch's own forward over the stored weights.
import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import * as tf from '@tensorflow/tfjs'
import {beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../../src/core/engine/index.js'
import {loadCheckpoint} from '../../../../src/core/model/checkpoint.js'
import {hiddenStates} from '../../../../src/core/model/encode.js'
import {toFloat32} from '../../../../src/core/model/safetensors.js'
import {decodeTorch, readTorchFile} from '../../../../src/core/model/torch/torch-load.js'
import {readWeights} from '../../../../src/core/model/weights.js'

const dir = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'torch')
const VARIANTS = ['zip-f32', 'legacy-f32', 'zip-f16', 'legacy-bf16', 'gamma-bare', 'sharded-bin', 'sharded-st', 'both']

/** max |a − b| / max |b| over every number of the two nested arrays. */
export function relError(a: number[][], b: number[][]): number {
  let num = 0
  let den = 0
  a.forEach((row, i) =>
    row.forEach((x, j) => {
      num = Math.max(num, Math.abs(x - b[i][j]))
      den = Math.max(den, Math.abs(b[i][j]))
    }),
  )
  return num / den
}

beforeAll(() => initBackend('cpu'))

describe('pytorch_model.bin', () => {
  it.each(VARIANTS)('%s: the encoder computes what PyTorch computed, to 1e-5 relative', async (name) => {
    const d = join(dir, name)
    const {model, initialised} = await loadCheckpoint(d, {vocab: name === 'gamma-bare' ? join(dir, 'vocab.txt') : undefined})
    const expected = JSON.parse(readFileSync(join(d, 'expected.json'), 'utf8')) as {inputs: {ids: number[]; segments: number[]}[]; hidden: number[][][]}
    try {
      expect(initialised.filter((n) => !n.startsWith(name === 'gamma-bare' ? 'cls.' : 'cls.pair_target_predictions'))).toEqual([])
      expected.inputs.forEach((x, k) => {
        const T = x.ids.length
        const got = tf.tidy(
          () =>
            (
              hiddenStates(
                model.params,
                model.config,
                tf.tensor2d([x.ids], [1, T], 'int32'),
                tf.tensor2d([x.segments], [1, T], 'int32'),
                tf.ones([1, T]),
                [2],
              ).arraySync() as number[][][]
            )[0],
        )
        expect(relError(got, expected.hidden[k])).toBeLessThan(1e-5)
      })
    } finally {
      model.dispose()
    }
  })

  it('tied weights and views: one storage read into every tensor that shares it', async () => {
    const t = await readTorchFile(join(dir, 'zip-f32', 'pytorch_model.bin'))
    expect(toFloat32(t.get('cls.predictions.decoder.weight')!)).toEqual(toFloat32(t.get('bert.embeddings.word_embeddings.weight')!))
    const q = t.get('bert.encoder.layer.0.attention.self.query.weight')!
    const v = t.get('bert.encoder.layer.0.attention.self.value.weight')!
    expect(q.shape).toEqual([32, 32])
    expect(toFloat32(q)).not.toEqual(toFloat32(v))
    expect(t.get('bert.encoder.layer.0.intermediate.dense.weight')!.shape).toEqual([64, 32])
    expect(t.get('bert.embeddings.word_embeddings.weight')!.dtype).toBe('F32')
    expect((await readTorchFile(join(dir, 'zip-f16', 'pytorch_model.bin'))).get('cls.predictions.bias')!.dtype).toBe('F16')
    expect((await readTorchFile(join(dir, 'legacy-bf16', 'pytorch_model.bin'))).get('cls.predictions.bias')!.dtype).toBe('BF16')
  })

  it('model.safetensors wins over pytorch_model.bin (which here is not even a checkpoint)', async () => {
    expect((await readWeights(join(dir, 'both'))).source).toBe(join(dir, 'both', 'model.safetensors'))
    await expect(readTorchFile(join(dir, 'both', 'pytorch_model.bin'))).rejects.toThrow(/not a PyTorch checkpoint/)
  })

  it('a checkpoint without vocab.txt: the error names --vocab', async () => {
    await expect(loadCheckpoint(join(dir, 'gamma-bare'))).rejects.toThrow(/no vocab.txt; give the model's vocabulary with --vocab FILE/)
  })
})

describe('hostile files: refused in one line, nothing executed', () => {
  const cases: [string, RegExp][] = [
    ['os-system.bin', /refusing to load global "posix.system"/],
    ['os-system-legacy.bin', /refusing to load global "posix.system"/],
    ['unknown-global.bin', /refusing to load global "collections.Counter"/],
    ['wrong-magic.bin', /wrong magic number/],
    ['short-storage.bin', /should hold 8 elements, the file has 2/],
    ['offset-past-end.bin', /shape \[2\] at offset 100 does not fit its storage of 6 elements/],
    ['shape-too-big.bin', /shape \[4, 4\] at offset 0 does not fit its storage of 6 elements/],
  ]
  it.each(cases)('%s', async (file, message) => {
    const cwd = process.cwd()
    const tmp = mkdtempSync(join(tmpdir(), 'span-hostile-'))
    process.chdir(tmp) // the pickle would `touch span-pwned-marker` here
    try {
      const err = await readTorchFile(join(dir, 'hostile', file)).then(
        () => null,
        (e: Error) => e,
      )
      expect(err?.message).toMatch(message)
      expect(err?.message).not.toContain('\n')
      expect(existsSync(join(tmp, 'span-pwned-marker'))).toBe(false)
    } finally {
      process.chdir(cwd)
    }
  })

  it('a truncated zip, cut anywhere, is refused in one line', () => {
    const buf = readFileSync(join(dir, 'zip-f32', 'pytorch_model.bin'))
    for (const cut of [10, 1000, buf.byteLength >> 1, buf.byteLength - 30, buf.byteLength - 1]) {
      expect(() => decodeTorch(buf.subarray(0, cut), 'x.bin')).toThrow(/^x\.bin: [^\n]*(truncated|corrupt)/)
    }
  })
})
