// readTorchFile reads a regular pytorch_model.bin storage by storage (issue 32: a `.bin` checkpoint
// had cost its size twice over, the whole file in one Buffer and every tensor copied out of it).
// Its state dicts are checked bit for bit against decodeTorch, the whole-buffer decode, on files
// written by PyTorch (fixtures/torch, tools/make-torch-fixtures.py: tied weights, q/k/v views into
// one storage, a transposed weight) and by span's own writers; which tensors take their storage's
// buffer as it is; the refusals of broken files; a FIFO; and a zip64 file past 4 GiB.
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {open} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'
import {type HostTensor, toFloat32} from '../../../../src/core/model/safetensors.js'
import {decodeTorch, readTorchFile} from '../../../../src/core/model/torch/torch-load.js'
import {statePickle, writeTorchFile} from '../../../../src/core/model/torch/torch-save.js'
import {writeZip} from '../../../../src/core/model/torch/zip-write.js'
import {LIMITS} from '../../../../src/core/util/read-whole.js'

const fixtures = join(import.meta.dirname, '..', '..', '..', '..', 'fixtures', 'torch')
const tmp = mkdtempSync(join(tmpdir(), 'span-torch-read-'))
afterAll(() => rmSync(tmp, {recursive: true, force: true}))

/** Every name, in order, with its dtype, shape and bytes, and whether the tensor owns its buffer. */
function expectSame(got: Map<string, HostTensor>, want: Map<string, HostTensor>): void {
  expect([...got.keys()]).toEqual([...want.keys()])
  for (const [name, t] of want) {
    const g = got.get(name)!
    expect([name, g.dtype, g.shape]).toEqual([name, t.dtype, t.shape])
    expect(
      Buffer.from(g.bytes.buffer, g.bytes.byteOffset, g.bytes.byteLength).equals(Buffer.from(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength)),
      name,
    ).toBe(true)
  }
}

/** No two tensors of a state dict hold bytes of one ArrayBuffer (a handed-over buffer is never aliased). */
function expectUnaliased(tensors: Map<string, HostTensor>): void {
  const seen = new Map<ArrayBufferLike, string>()
  for (const [name, t] of tensors) {
    if (t.bytes.byteLength === 0) continue
    expect(seen.get(t.bytes.buffer), `${name} shares a buffer`).toBeUndefined()
    seen.set(t.bytes.buffer, name)
  }
}

const owned = (tensors: Map<string, HostTensor>): string[] => [...tensors].filter(([, t]) => t.own === true).map(([name]) => name)

/** A reader's refusal, or null. */
const refusal = (p: Promise<unknown>): Promise<string | null> =>
  p.then(
    () => null,
    (e: Error) => e.message,
  )
const decodeRefusal = (buf: Uint8Array, source: string): string | null => {
  try {
    decodeTorch(buf, source)
    return null
  } catch (e) {
    return (e as Error).message
  }
}

const FILES = [
  'zip-f32/pytorch_model.bin',
  'legacy-f32/pytorch_model.bin',
  'legacy-views/pytorch_model.bin',
  'zip-f16/pytorch_model.bin',
  'legacy-bf16/pytorch_model.bin',
  'gamma-bare/pytorch_model.bin',
  'sharded-bin/pytorch_model-00001-of-00002.bin',
  'sharded-bin/pytorch_model-00002-of-00002.bin',
]

describe('PyTorch-written files, storage by storage', () => {
  it.each(FILES)('%s: the same state dict as the whole-buffer decode, bit for bit, no buffer shared', async (file) => {
    const path = join(fixtures, file)
    const got = await readTorchFile(path)
    expectSame(got, decodeTorch(readFileSync(path), path))
    expectUnaliased(got)
    expect(owned(got).length).toBeGreaterThan(0)
  })

  /** The tensors of zip-f32 (and legacy-views, the same state dict) that share a storage or are not contiguous. */
  const VIEWS = [
    'bert.embeddings.word_embeddings.weight', // one storage with the tied decoder weight
    'cls.predictions.decoder.weight',
    'cls.predictions.bias', // one storage with its alias cls.predictions.decoder.bias
    'cls.predictions.decoder.bias',
    ...[0, 1].flatMap((l) => ['query', 'key', 'value'].map((w) => `bert.encoder.layer.${l}.attention.self.${w}.weight`)), // views into one [3H, H] storage
    'bert.encoder.layer.0.intermediate.dense.weight', // transposed (not contiguous)
    'bert.encoder.layer.1.intermediate.dense.weight',
  ]
  const TIED = ['bert.embeddings.word_embeddings.weight', 'cls.predictions.decoder.weight']

  it.each([
    ['zip-f32', VIEWS],
    ['legacy-views', VIEWS],
    ['legacy-f32', TIED],
  ])('%s: whole unshared storages are taken as they are; tied weights, aliases, views and transposed weights are copied', async (dir, copied) => {
    const t = await readTorchFile(join(fixtures, dir, 'pytorch_model.bin'))
    expect([...t.keys()].filter((name) => t.get(name)!.own !== true)).toEqual([...t.keys()].filter((name) => copied.includes(name)))
    const pos = t.get('bert.embeddings.position_embeddings.weight')!
    expect(toFloat32(pos).buffer).toBe(pos.bytes.buffer) // F32 handed over, no copy
    expect(toFloat32(t.get('cls.predictions.decoder.weight')!)).toEqual(toFloat32(t.get('bert.embeddings.word_embeddings.weight')!))
    const [q, k] = ['query', 'key'].map((w) => toFloat32(t.get(`bert.encoder.layer.0.attention.self.${w}.weight`)!))
    expect(q).not.toEqual(k)
  })

  it('legacy-views holds what zip-f32 holds (tools/make-torch-legacy-views.py), read from either', async () => {
    expectSame(await readTorchFile(join(fixtures, 'legacy-views', 'pytorch_model.bin')), await readTorchFile(join(fixtures, 'zip-f32', 'pytorch_model.bin')))
  })
})

/** n tensors of a few F32 values each under long names, and an I64 and an F16 one. */
function manyTensors(n: number): [string, HostTensor][] {
  const out: [string, HostTensor][] = []
  for (let i = 0; i < n; i++) {
    const v = Float32Array.from({length: 3 + (i % 5)}, (_, j) => i + j / 8)
    out.push([
      `bert.encoder.layer.${i}.a_rather_long_parameter_name_as_real_checkpoints_have.weight`,
      {dtype: 'F32', shape: [v.length], bytes: new Uint8Array(v.buffer)},
    ])
  }
  out.push(['ids', {dtype: 'I64', shape: [2, 2], bytes: new Uint8Array(new BigInt64Array([1n, -2n, 3n, 2n ** 40n]).buffer)}])
  out.push(['half', {dtype: 'F16', shape: [3], bytes: new Uint8Array(new Uint16Array([0x3c00, 0xc000, 0x7bff]).buffer)}])
  return out
}

const P = (...b: number[]) => Buffer.from(b)
const MAGIC = P(0x80, 2, 0x8a, 10, 0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e) // LONG1 0x1950a86a20f9469cfc6c
const HEADER = Buffer.concat([MAGIC, P(0x80, 2, 0x4d, 0xe9, 0x03, 0x2e), P(0x80, 2, 0x7d, 0x2e)]) // 1001, {}

/** A legacy torch.save stream of the tensors (storage i holds tensor i): header, object, key list, storages. */
function legacyStream(tensors: [string, HostTensor][]): Buffer {
  const str = (s: string) => Buffer.concat([P(0x58, s.length, 0, 0, 0), Buffer.from(s)]) // BINUNICODE
  const keys = Buffer.concat([P(0x80, 2, 0x5d, 0x28), ...tensors.map((_, i) => str(String(i))), P(0x65, 0x2e)]) // [keys…]
  const storages = tensors.map(([, t]) => {
    const count = Buffer.alloc(8)
    count.writeBigInt64LE(BigInt(t.shape.reduce((a, b) => a * b, 1)))
    return Buffer.concat([count, t.bytes])
  })
  return Buffer.concat([HEADER, statePickle(tensors), keys, ...storages])
}

describe("span's own writers: every tensor takes its storage as it is", () => {
  const tensors = manyTensors(1500)
  const want = new Map(tensors)

  it('zip (span export --format pytorch)', async () => {
    const path = join(tmp, 'own.bin')
    await writeTorchFile(path, tensors)
    const got = await readTorchFile(path)
    expectSame(got, want)
    expectSame(got, decodeTorch(readFileSync(path), path))
    expect(owned(got)).toEqual([...want.keys()])
    expectUnaliased(got)
  })

  it('legacy, its pickles past the first 64 KiB read (the prefix grows until they parse)', async () => {
    const path = join(tmp, 'own-legacy.bin')
    const buf = legacyStream(tensors)
    writeFileSync(path, buf)
    expect(statePickle(tensors).byteLength).toBeGreaterThan(4 * 2 ** 16)
    const got = await readTorchFile(path)
    expectSame(got, want)
    expectSame(got, decodeTorch(buf, path))
    expect(owned(got)).toEqual([...want.keys()])
    expectUnaliased(got)
  })
})

describe('broken files: the same refusal as the whole-buffer decode', () => {
  const cuts = (n: number) => [1, 10, 1000, n >> 1, n - 30, n - 9, n - 1]

  it.each(['zip-f32', 'legacy-f32', 'legacy-bf16'])('%s cut short anywhere', async (dir) => {
    const buf = readFileSync(join(fixtures, dir, 'pytorch_model.bin'))
    for (const cut of cuts(buf.byteLength)) {
      const path = join(tmp, `cut-${dir}-${cut}.bin`)
      writeFileSync(path, buf.subarray(0, cut))
      const want = decodeRefusal(buf.subarray(0, cut), path)
      expect(want, `cut at ${cut}`).toMatch(/truncated|corrupt|not a PyTorch checkpoint/)
      expect(await refusal(readTorchFile(path)), `cut at ${cut}`).toBe(want)
    }
  })

  it('a legacy file cut inside its pickles, past the first 64 KiB', async () => {
    const buf = legacyStream(manyTensors(1500))
    const path = join(tmp, 'cut-pickle.bin')
    writeFileSync(path, buf.subarray(0, 3 * 2 ** 16))
    expect(await refusal(readTorchFile(path))).toMatch(/^\S+cut-pickle\.bin: pickle at byte \d+: truncated pickle$/)
    expect(await refusal(readTorchFile(path))).toBe(decodeRefusal(buf.subarray(0, 3 * 2 ** 16), path))
  })

  it('a storage missing from the archive', async () => {
    const tensors = manyTensors(3)
    const path = join(tmp, 'missing.bin')
    await writeZip(path, [
      {name: 'archive/data.pkl', data: statePickle(tensors)},
      ...tensors.slice(1).map(([, t], i) => ({name: `archive/data/${i + 1}`, data: t.bytes})),
    ])
    const message = await refusal(readTorchFile(path))
    expect(message).toBe(`${path}: storage 0 is missing from the archive`)
    expect(message).toBe(decodeRefusal(readFileSync(path), path))
  })

  it.each(readdirHostile())('hostile/%s', async (file) => {
    const path = join(fixtures, 'hostile', file)
    const cwd = process.cwd()
    process.chdir(tmp) // a pickle that ran would `touch span-pwned-marker` here
    try {
      const message = await refusal(readTorchFile(path))
      expect(message).not.toBeNull()
      expect(message).toBe(decodeRefusal(readFileSync(path), path))
      expect(existsSync(join(tmp, 'span-pwned-marker'))).toBe(false)
    } finally {
      process.chdir(cwd)
    }
  })
})

function readdirHostile(): string[] {
  return ['os-system.bin', 'os-system-legacy.bin', 'unknown-global.bin', 'wrong-magic.bin', 'short-storage.bin', 'offset-past-end.bin', 'shape-too-big.bin']
}

describe('what is not a regular file is read whole', () => {
  it('a FIFO: the same state dict, every tensor copied out of the one buffer', async () => {
    const src = join(fixtures, 'zip-f32', 'pytorch_model.bin')
    const fifo = join(tmp, 'fifo.bin')
    await new Promise<void>((done, fail) => spawn('mkfifo', [fifo]).on('exit', (c) => (c === 0 ? done() : fail(new Error(`mkfifo: ${c}`)))))
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', src, fifo])
    const written = new Promise((done) => writer.on('exit', done))
    const got = await readTorchFile(fifo)
    expect(await written).toBe(0)
    expectSame(got, decodeTorch(readFileSync(src), src))
    expect(owned(got)).toEqual([])
  })
})

/** A stored zip64 archive whose storages lie past 4 GiB: data.pkl first, a hole, the storages, the central directory. */
async function zip64PastFourGiB(path: string, tensors: [string, HostTensor][]): Promise<void> {
  const entries = [{name: 'archive/data.pkl', data: statePickle(tensors)}, ...tensors.map(([, t], i) => ({name: `archive/data/${i}`, data: t.bytes}))]
  const fh = await open(path, 'w')
  try {
    const central: Buffer[] = []
    let pos = 0
    for (const [k, e] of entries.entries()) {
      if (k === 1) pos = 2 ** 32 + 4096 // a hole (sparse on disk)
      const name = Buffer.from(e.name)
      const local = Buffer.alloc(30 + name.length)
      local.writeUInt32LE(0x04034b50, 0)
      local.writeUInt32LE(e.data.length, 18)
      local.writeUInt32LE(e.data.length, 22)
      local.writeUInt16LE(name.length, 26)
      name.copy(local, 30)
      await fh.write(Buffer.concat([local, e.data]), 0, local.length + e.data.length, pos)
      central.push(centralZip64(name, e.data.length, pos))
      pos += local.length + e.data.length
    }
    const dir = Buffer.concat(central)
    await fh.write(Buffer.concat([dir, endRecords(entries.length, dir.length, pos)]), 0, dir.length + 98, pos)
  } finally {
    await fh.close()
  }
}

/** A central header whose local offset is in a zip64 extra field. */
function centralZip64(name: Buffer, size: number, offset: number): Buffer {
  const c = Buffer.alloc(46 + name.length + 12)
  c.writeUInt32LE(0x02014b50, 0)
  c.writeUInt32LE(size, 20)
  c.writeUInt32LE(size, 24)
  c.writeUInt16LE(name.length, 28)
  c.writeUInt16LE(12, 30)
  c.writeUInt32LE(0xffffffff, 42)
  name.copy(c, 46)
  c.writeUInt16LE(1, 46 + name.length)
  c.writeUInt16LE(8, 48 + name.length)
  c.writeBigUInt64LE(BigInt(offset), 50 + name.length)
  return c
}

/** The zip64 end record (56 bytes), its locator (20) and the end record (22) for a directory at `offset`. */
function endRecords(count: number, size: number, offset: number): Buffer {
  const z = Buffer.alloc(56)
  z.writeUInt32LE(0x06064b50, 0)
  z.writeBigUInt64LE(44n, 4)
  z.writeBigUInt64LE(BigInt(count), 24)
  z.writeBigUInt64LE(BigInt(count), 32)
  z.writeBigUInt64LE(BigInt(size), 40)
  z.writeBigUInt64LE(BigInt(offset), 48)
  const locator = Buffer.alloc(20)
  locator.writeUInt32LE(0x07064b50, 0)
  locator.writeBigUInt64LE(BigInt(offset + size), 8)
  locator.writeUInt32LE(1, 16)
  const end = Buffer.alloc(22)
  end.writeUInt32LE(0x06054b50, 0)
  end.writeUInt16LE(0xffff, 8)
  end.writeUInt16LE(0xffff, 10)
  end.writeUInt32LE(0xffffffff, 12)
  end.writeUInt32LE(0xffffffff, 16)
  return Buffer.concat([z, locator, end])
}

describe('a file over 4 GB', () => {
  it('loads: no Buffer of the whole file is made (the whole-buffer read refuses it)', async () => {
    const tensors = manyTensors(4)
    const path = join(tmp, 'big.bin')
    await zip64PastFourGiB(path, tensors)
    expect(statSync(path).size).toBeGreaterThan(LIMITS.weights)
    const got = await readTorchFile(path)
    expectSame(got, new Map(tensors))
    expect(owned(got)).toEqual(tensors.map(([name]) => name))
    rmSync(path)
  })
})

describe('a slice saved alone (a view into a storage no other tensor uses)', () => {
  const arange = (from: number, to: number) => Array.from({length: to - from}, (_, i) => from + i)

  it.each(['zip.bin', 'legacy.bin'])('slices/%s: copied out at its offset; a tensor that is all of its storage is taken', async (file) => {
    const path = join(fixtures, 'slices', file)
    const t = await readTorchFile(path)
    expectSame(t, decodeTorch(readFileSync(path), path))
    expect(owned(t)).toEqual(['whole'])
    expect(Array.from(toFloat32(t.get('whole')!))).toEqual(arange(0, 5))
    expect(Array.from(toFloat32(t.get('head')!))).toEqual(arange(0, 4))
    expect(Array.from(toFloat32(t.get('tail')!))).toEqual(arange(6, 10))
    expect(Array.from(toFloat32(t.get('row')!))).toEqual(arange(4, 8))
    expect(t.get('ids')).toMatchObject({dtype: 'I64', shape: [4]})
    expect(Array.from(toFloat32(t.get('ids')!))).toEqual(arange(1, 5))
    for (const [name, x] of t) expect([name, x.bytes.byteLength]).toEqual([name, x.shape.reduce((a, b) => a * b, 1) * (x.dtype === 'I64' ? 8 : 4)])
  })
})
