import {mkdtemp, readFile, readdir, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {Rng} from '../../../src/core/data/rng.js'
import {initBackend} from '../../../src/core/engine/index.js'
import {collate, disposeBatch, toTensors} from '../../../src/core/model/batch.js'
import {loadCheckpoint, saveCheckpoint} from '../../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {decodeSafetensors, encodeHeader, f32Tensor, readSafetensors, toFloat32, writeSafetensors} from '../../../src/core/model/safetensors.js'
import {SpanError} from '../../../src/core/stream/errors.js'
import {AdamW} from '../../../src/core/train/optim.js'
import {loadTrainingState, trainingStateFiles} from '../../../src/core/train/state.js'
import {trainStep} from '../../../src/core/train/step.js'
import {example, smallConfig} from './helpers.js'

let dir = ''
const vocab = () => join(dir, 'src-vocab.txt')

beforeAll(async () => {
  await initBackend('cpu')
  dir = await mkdtemp(join(tmpdir(), 'span-ckpt-'))
  await writeFile(vocab(), Array.from({length: 40}, (_, i) => `tok${i}`).join('\n') + '\n')
})
afterAll(() => rm(dir, {recursive: true, force: true}))

const values = (m: SpanBertForPreTraining) => new Map(m.params.entries().map(([k, v]) => [k, Array.from(v.dataSync())]))

describe('safetensors', () => {
  it('writes the format: u64 LE header length, 8-aligned JSON header, data in order', async () => {
    const path = join(dir, 'a.safetensors')
    await writeSafetensors(path, [['x', f32Tensor([2], new Float32Array([1.5, -2]))], ['y', f32Tensor([1, 1], new Float32Array([3]))]], {format: 'pt'})
    const buf = await readFile(path)
    const n = Number(buf.readBigUInt64LE(0))
    expect(n % 8).toBe(0)
    const header = JSON.parse(buf.subarray(8, 8 + n).toString())
    expect(header).toEqual({__metadata__: {format: 'pt'}, x: {dtype: 'F32', shape: [2], data_offsets: [0, 8]}, y: {dtype: 'F32', shape: [1, 1], data_offsets: [8, 12]}})
    expect(buf.readFloatLE(8 + n + 4)).toBe(-2)
    const back = await readSafetensors(path)
    expect(back.metadata).toEqual({format: 'pt'})
    expect(Array.from(toFloat32(back.tensors.get('y')!))).toEqual([3])
  })

  it('rejects a corrupt header, truncated data and inconsistent offsets with a clear SpanError', () => {
    const good = Buffer.concat([encodeHeader([['x', f32Tensor([2], new Float32Array([1, 2]))]], {}), Buffer.alloc(8)])
    expect(() => decodeSafetensors(good, 'f')).not.toThrow()
    expect(() => decodeSafetensors(good.subarray(0, good.length - 3), 'f')).toThrow(/^f: truncated data/)
    const bad = Buffer.from(good)
    bad.write('#', 9)
    expect(() => decodeSafetensors(bad, 'f')).toThrow(/^f: corrupt safetensors header/)
    const huge = Buffer.from(good)
    huge.writeBigUInt64LE(1n << 40n, 0)
    expect(() => decodeSafetensors(huge, 'f')).toThrow(/exceeds the file/)
    expect(() => decodeSafetensors(Buffer.alloc(3), 'f')).toThrow(SpanError)
    const wrongSize = Buffer.concat([encodeHeader([['x', f32Tensor([3], new Float32Array([1, 2]))]], {}), Buffer.alloc(8)])
    expect(() => decodeSafetensors(wrongSize, 'f')).toThrow(/expected 12/)
  })
})

describe('checkpoints', () => {
  it('round-trips bit-identical tensors, config and vocab; leaves no temporary files', async () => {
    const model = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm', 'sbo', 'nsp']}), 21)
    const ck = join(dir, 'ck1')
    await saveCheckpoint(ck, model, vocab())
    expect((await readdir(ck)).sort()).toEqual(['config.json', 'model.safetensors', 'span-manifest.json', 'special_tokens_map.json', 'tokenizer_config.json', 'vocab.txt']) // the manifest: sizes and SHA-256
    const config = JSON.parse(await readFile(join(ck, 'config.json'), 'utf-8'))
    expect(config).toMatchObject({model_type: 'bert', hidden_size: 16, vocab_size: 40, objectives: ['mlm', 'sbo', 'nsp'], sbo: {max_targets: 4}})
    const names = [...(await readSafetensors(join(ck, 'model.safetensors'))).tensors.keys()]
    expect(names).toContain('bert.encoder.layer.1.attention.self.query.weight')
    expect(names).not.toContain('cls.predictions.decoder.weight')
    const loaded = await loadCheckpoint(ck)
    expect(loaded.initialised).toEqual([])
    expect(loaded.ignored).toEqual([])
    expect(loaded.model.config).toEqual(model.config)
    expect(values(loaded.model)).toEqual(values(model))
    expect(await readFile(loaded.vocabPath, 'utf-8')).toBe(await readFile(vocab(), 'utf-8'))
    model.dispose()
    loaded.model.dispose()
  })

  it('loads a Hugging Face layout: no heads, no bert. prefix, gamma/beta, extra keys', async () => {
    const model = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm']}), 22)
    const ck = join(dir, 'hf')
    await saveCheckpoint(ck, model, vocab())
    const file = await readSafetensors(join(ck, 'model.safetensors'))
    const hf = [...file.tensors]
      .filter(([k]) => k.startsWith('bert.') && !k.startsWith('bert.pooler'))
      .map(([k, t]) => [k.replace(/^bert\./, '').replace(/LayerNorm\.weight$/, 'LayerNorm.gamma'), t] as [string, typeof t])
    hf.push(['embeddings.position_ids', {dtype: 'I64', shape: [1, 2], bytes: new Uint8Array(16)}])
    await writeSafetensors(join(ck, 'model.safetensors'), hf)
    const loaded = await loadCheckpoint(ck, {objectives: ['mlm', 'sbo'], seed: 3})
    expect(loaded.ignored).toEqual(['bert.embeddings.position_ids'])
    expect(loaded.initialised).toContain('bert.pooler.dense.weight')
    expect(loaded.initialised).toContain('cls.pair_target_predictions.mlp_layer_norm.linear1.weight')
    expect(loaded.initialised).toContain('cls.predictions.bias')
    const a = values(model)
    const b = values(loaded.model)
    expect(b.get('bert.encoder.layer.0.output.LayerNorm.weight')).toEqual(a.get('bert.encoder.layer.0.output.LayerNorm.weight'))
    expect(b.get('bert.embeddings.word_embeddings.weight')).toEqual(a.get('bert.embeddings.word_embeddings.weight'))
    model.dispose()
    loaded.model.dispose()
  })

  it('refuses weights whose shapes do not match the config, and missing encoder weights', async () => {
    const model = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm']}), 23)
    const ck = join(dir, 'bad')
    await saveCheckpoint(ck, model, vocab())
    const cfg = JSON.parse(await readFile(join(ck, 'config.json'), 'utf-8'))
    await writeFile(join(ck, 'config.json'), JSON.stringify({...cfg, vocab_size: 41}))
    await expect(loadCheckpoint(ck)).rejects.toThrow(/"bert.embeddings.word_embeddings.weight" has shape \[40, 16\], the config expects \[41, 16\]/)
    await writeFile(join(ck, 'config.json'), JSON.stringify({...cfg, num_hidden_layers: 3}))
    await expect(loadCheckpoint(ck)).rejects.toThrow(/missing encoder parameter "bert.encoder.layer.2/)
    await writeFile(join(ck, 'config.json'), '{"hidden_size": ')
    await expect(loadCheckpoint(ck)).rejects.toThrow(SpanError)
    model.dispose()
  })

  it('saves and restores the optimiser moments and trainer state so a resumed step is identical', async () => {
    const cfg = smallConfig()
    const b = toTensors(collate([example(10, 2, 4, new Rng(1)), example(12, 3, 6, new Rng(2))], {padId: 0, maxTargets: 4, maxPositions: 32}))
    const model = SpanBertForPreTraining.init(cfg, 24)
    const opt = new AdamW()
    trainStep(model, opt, b, 1e-3, {training: true, rng: new Rng(1)})
    const ck = join(dir, 'resume')
    await saveCheckpoint(ck, model, vocab(), await trainingStateFiles(opt, {step: 1, rng: [1, 2, 3, 4]}))
    trainStep(model, opt, b, 1e-3, {training: true, rng: new Rng(2)})
    const loaded = await loadCheckpoint(ck)
    const opt2 = new AdamW()
    expect(await loadTrainingState(ck, opt2)).toEqual({step: 1, rng: [1, 2, 3, 4]})
    expect(opt2.step).toBe(1)
    trainStep(loaded.model, opt2, b, 1e-3, {training: true, rng: new Rng(2)})
    expect(values(loaded.model)).toEqual(values(model))
    ;[model, loaded.model].forEach((m) => m.dispose())
    ;[opt, opt2].forEach((o) => o.dispose())
    disposeBatch(b)
  })
})
