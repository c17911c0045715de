import * as tf from '@tensorflow/tfjs'
import {mkdir, mkdtemp, readFile, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {initBackend} from '../../../src/core/engine/index.js'
import {hostToTensor, loadCheckpoint, saveCheckpoint} from '../../../src/core/model/checkpoint.js'
import {SpanBertForPreTraining} from '../../../src/core/model/pretraining.js'
import {type HostTensor, decodeSafetensors, encodeHeader, f32Tensor, readSafetensors, toFloat32, writeSafetensors} from '../../../src/core/model/safetensors.js'
import {SpanError} from '../../../src/core/stream/errors.js'
import {smallConfig} from './helpers.js'

// readSafetensors reads a regular file tensor by tensor, each into a buffer of its own, and toFloat32
// hands an F32 tensor's buffer over instead of copying it: loading a checkpoint holds each weight once,
// not the whole file and a float copy side by side (issue 32: `span fill` of a base checkpoint peaked
// at 958 MiB RSS, 536 after, against transformers' 788).

let dir = ''
beforeAll(async () => {
  await initBackend('cpu')
  dir = await mkdtemp(join(tmpdir(), 'span-st-read-'))
})
afterAll(() => rm(dir, {recursive: true, force: true}))

const bf16 = (xs: number[]): HostTensor => {
  const f = new Float32Array(xs)
  const u = new Uint16Array(f.length)
  new Uint32Array(f.buffer).forEach((b, i) => (u[i] = b >>> 16))
  return {dtype: 'BF16', shape: [xs.length], bytes: new Uint8Array(u.buffer)}
}

async function sample(): Promise<string> {
  const path = join(dir, `s${Math.random().toString(36).slice(2)}.safetensors`)
  await writeSafetensors(
    path,
    [
      ['x', f32Tensor([2, 3], new Float32Array([1, -2, 3.5, 4, 5, -6]))],
      ['y', bf16([1.5, -0.25])],
      ['z', f32Tensor([1], new Float32Array([7]))],
    ],
    {format: 'pt'},
  )
  return path
}

describe('readSafetensors, tensor by tensor', () => {
  it('gives each tensor a buffer of its own, exactly its bytes, and toFloat32 hands F32 ones over uncopied', async () => {
    const path = await sample()
    const file = await readSafetensors(path)
    expect(file.metadata).toEqual({format: 'pt'})
    const x = file.tensors.get('x')!
    expect(x).toMatchObject({dtype: 'F32', shape: [2, 3], own: true})
    expect(x.bytes.byteOffset).toBe(0)
    expect(x.bytes.buffer.byteLength).toBe(24) // not the file's bytes
    const xs = toFloat32(x)
    expect(xs.buffer).toBe(x.bytes.buffer) // a view, no copy
    expect(Array.from(xs)).toEqual([1, -2, 3.5, 4, 5, -6])
    expect(Array.from(toFloat32(file.tensors.get('z')!))).toEqual([7])
    const y = file.tensors.get('y')!
    expect(toFloat32(y).buffer).not.toBe(y.bytes.buffer) // BF16: converted
    expect(Array.from(toFloat32(y))).toEqual([1.5, -0.25])
  })

  it('reads what decodeSafetensors reads; a decoded whole-file buffer is never handed over (its tensors are copied)', async () => {
    const path = await sample()
    const buf = await readFile(path)
    const whole = decodeSafetensors(buf, path)
    const byTensor = await readSafetensors(path)
    expect([...byTensor.tensors.keys()]).toEqual([...whole.tensors.keys()])
    for (const [name, t] of whole.tensors) {
      expect(t.own).toBeUndefined()
      expect(toFloat32(t).buffer).not.toBe(buf.buffer) // a view would keep the whole file alive
      expect(Array.from(toFloat32(byTensor.tensors.get(name)!))).toEqual(Array.from(toFloat32(t)))
    }
  })

  it('refuses the faults decodeSafetensors refuses, in the same words, naming the file', async () => {
    const good = Buffer.concat([encodeHeader([['x', f32Tensor([2], new Float32Array([1, 2]))]], {}), Buffer.alloc(8)])
    const cases: [string, Buffer, RegExp][] = [
      ['truncated', good.subarray(0, good.length - 3), /truncated data: tensor "x" ends at byte 8, the data has 5/],
      ['short', Buffer.alloc(3), /not a safetensors file \(shorter than its 8-byte header length\)/],
      ['garbled', Buffer.from(good).fill('#', 9, 10), /corrupt safetensors header/],
      ['huge', Buffer.from(good), /corrupt safetensors header: length 1099511627776 exceeds the file/],
      ['wrong-size', Buffer.concat([encodeHeader([['x', f32Tensor([3], new Float32Array([1, 2]))]], {}), Buffer.alloc(8)]), /expected 12/],
      ['trailing', Buffer.concat([good, Buffer.alloc(4)]), /4 bytes after the last tensor belong to no tensor/],
    ]
    cases[3][1].writeBigUInt64LE(1n << 40n, 0)
    for (const [name, bytes, message] of cases) {
      const path = join(dir, `${name}.safetensors`)
      await writeFile(path, bytes)
      expect(() => decodeSafetensors(bytes, path)).toThrow(message)
      const err = await readSafetensors(path).catch((e: unknown) => e as Error)
      expect(err).toBeInstanceOf(SpanError)
      expect((err as Error).message.startsWith(`${path}: `)).toBe(true)
      expect((err as Error).message).toMatch(message)
    }
    await mkdir(join(dir, 'a-dir'))
    await expect(readSafetensors(join(dir, 'a-dir'))).rejects.toThrow(/a-dir: is a directory/)
    await expect(readSafetensors(join(dir, 'none.safetensors'))).rejects.toThrow(/none\.safetensors: file not found/)
    await expect(readSafetensors('/dev/null')).rejects.toThrow(/^\/dev\/null: not a safetensors file/) // not a regular file: read whole
  })
})

describe('loading a checkpoint holds each weight once', () => {
  it('makes each parameter from its tensor buffer without a copy, the values unchanged', async () => {
    const path = await sample()
    const x = (await readSafetensors(path)).tensors.get('x')!
    const t = hostToTensor({name: 'x', shape: [2, 3], init: 'normal'}, x, path)
    const stored = (tf.backend() as unknown as {readSync(id: object): Float32Array}).readSync(t.dataId)
    expect(stored.buffer).toBe(x.bytes.buffer) // the bytes read are the weight
    expect(Array.from(t.dataSync())).toEqual([1, -2, 3.5, 4, 5, -6])
    t.dispose()
  })

  it('loads a saved model bit-identical', async () => {
    const model = SpanBertForPreTraining.init(smallConfig({objectives: ['mlm', 'sbo']}), 5)
    const vocab = join(dir, 'vocab.txt')
    await writeFile(vocab, Array.from({length: 40}, (_, i) => `tok${i}`).join('\n') + '\n')
    await saveCheckpoint(join(dir, 'ck'), model, vocab)
    const loaded = await loadCheckpoint(join(dir, 'ck'))
    for (const [name, v] of model.params.entries()) expect(Array.from(loaded.model.params.get(name).dataSync()), name).toEqual(Array.from(v.dataSync()))
    model.dispose()
    loaded.model.dispose()
  })
})
