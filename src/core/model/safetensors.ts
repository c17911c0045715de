import {type FileHandle, open} from 'node:fs/promises'
import {SpanError} from '../stream/errors.js'
import {readError} from '../util/fs-errors.js'
import {LIMITS, readWhole, tooLarge} from '../util/read-whole.js'

/**
 * The safetensors format (huggingface/safetensors): an 8-byte little-endian header length N,
 * N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__"?: {…}},
 * then the raw little-endian row-major data, offsets relative to its start.
 */
export type Dtype = 'F64' | 'F32' | 'F16' | 'BF16' | 'I64' | 'I32' | 'I16' | 'I8' | 'U8' | 'BOOL'

const ITEM_SIZE: Record<Dtype, number> = {F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1}

/** A tensor on the host, as stored. */
export interface HostTensor {
  dtype: Dtype
  shape: number[]
  bytes: Uint8Array
  /** `bytes` fill a buffer of their own, read from a file for this tensor alone: toFloat32 may hand them over as they are */
  own?: boolean
}

export interface SafetensorsFile {
  tensors: Map<string, HostTensor>
  metadata: Record<string, string>
}

export function f32Tensor(shape: number[], data: Float32Array): HostTensor {
  return {dtype: 'F32', shape, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength)}
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/**
 * The tensor's values as float32 (F32 as is; F64, F16, BF16 and integers converted). An F32
 * tensor that owns its bytes (`own`: readSafetensors read it into a buffer of its own) on a
 * little-endian host is not copied: the array is a view of `bytes`, so loading a checkpoint holds
 * each weight once rather than the file's bytes and a float copy side by side (issue 32, `span fill`'s
 * peak memory); such a tensor is read once, into one tf.Tensor, and not used again.
 */
export function toFloat32(t: HostTensor): Float32Array {
  const n = t.shape.reduce((a, b) => a * b, 1)
  if (t.dtype === 'F32' && t.own === true && LITTLE_ENDIAN && t.bytes.byteOffset % 4 === 0) return new Float32Array(t.bytes.buffer, t.bytes.byteOffset, n)
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength)
  const out = new Float32Array(n)
  const read = readers[t.dtype]
  for (let i = 0; i < n; i++) out[i] = read(dv, i)
  return out
}

const readers: Record<Dtype, (dv: DataView, i: number) => number> = {
  F64: (dv, i) => dv.getFloat64(8 * i, true),
  F32: (dv, i) => dv.getFloat32(4 * i, true),
  F16: (dv, i) => halfToFloat(dv.getUint16(2 * i, true)),
  BF16: (dv, i) => bf16ToFloat(dv.getUint16(2 * i, true)),
  I64: (dv, i) => Number(dv.getBigInt64(8 * i, true)),
  I32: (dv, i) => dv.getInt32(4 * i, true),
  I16: (dv, i) => dv.getInt16(2 * i, true),
  I8: (dv, i) => dv.getInt8(i),
  U8: (dv, i) => dv.getUint8(i),
  BOOL: (dv, i) => dv.getUint8(i),
}

function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1
  const e = (h >> 10) & 0x1f
  const f = h & 0x3ff
  if (e === 0) return s * 2 ** -14 * (f / 1024)
  if (e === 31) return f ? NaN : s * Infinity
  return s * 2 ** (e - 15) * (1 + f / 1024)
}

function bf16ToFloat(b: number): number {
  const dv = new DataView(new ArrayBuffer(4))
  dv.setUint32(0, b << 16, false)
  return dv.getFloat32(0, false)
}

/** Where a tensor's bytes lie in the data that follows the header: [begin, end). */
interface Extent {
  dtype: Dtype
  shape: number[]
  begin: number
  end: number
}

/** A file's header: its tensors' extents, its metadata, and where the data starts. */
interface Header {
  extents: Map<string, Extent>
  metadata: Record<string, string>
  dataStart: number
}

/**
 * The header of a safetensors file of `size` bytes whose first bytes are `head` (all of the header:
 * 8 + its length, or just the 8 when that length is past the file), validated with every tensor's
 * extent against the data's length.
 */
function decodeHeader(head: Uint8Array, size: number, source: string): Header {
  const fail = (msg: string): never => {
    throw new SpanError(`${source}: ${msg}`)
  }
  if (size < 8) fail('not a safetensors file (shorter than its 8-byte header length)')
  const n = Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true))
  if (n > size - 8) fail(`corrupt safetensors header: length ${n} exceeds the file (${size} bytes)`)
  let header: Record<string, unknown> = {}
  try {
    header = JSON.parse(new TextDecoder('utf-8', {fatal: true}).decode(head.subarray(8, 8 + n))) as Record<string, unknown>
  } catch (err) {
    fail(`corrupt safetensors header: ${(err as Error).message}`)
  }
  if (header === null || typeof header !== 'object' || Array.isArray(header)) fail('corrupt safetensors header: not a JSON object')
  const extents = new Map<string, Extent>()
  let metadata: Record<string, string> = {}
  for (const [name, entry] of Object.entries(header)) {
    if (name === '__metadata__') metadata = checkMetadata(entry, fail)
    else extents.set(name, decodeEntry(name, entry, size - 8 - n, fail))
  }
  checkLayout(header as Record<string, {data_offsets: [number, number]}>, size - 8 - n, fail)
  return {extents, metadata, dataStart: 8 + n}
}

/** Parses a safetensors file's bytes, validating the header and every tensor's extent (the tensors are views of `buf`). */
export function decodeSafetensors(buf: Uint8Array, source: string): SafetensorsFile {
  const {extents, metadata, dataStart} = decodeHeader(buf, buf.byteLength, source)
  const data = buf.subarray(dataStart)
  const tensors = new Map<string, HostTensor>()
  for (const [name, e] of extents) tensors.set(name, {dtype: e.dtype, shape: e.shape, bytes: data.subarray(e.begin, e.end)})
  return {tensors, metadata}
}

/** __metadata__: a map of strings to strings (the format's only allowed form). */
function checkMetadata(entry: unknown, fail: (m: string) => never): Record<string, string> {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry) || !Object.values(entry).every((v) => typeof v === 'string')) {
    fail('corrupt safetensors header: __metadata__ is not a map of strings to strings')
  }
  return entry as Record<string, string>
}

/**
 * The format's layout rule (huggingface/safetensors, the "format" section of its README and
 * Metadata::validate in safetensors/src/tensor.rs @v0.4.5): taken in order of their offsets, the
 * tensors' byte ranges start at 0, each where the one before ends (none overlapping, no hole), and
 * the last ends where the data ends. So a range cannot be read twice as two tensors, and no bytes
 * hide between them.
 */
function checkLayout(header: Record<string, {data_offsets: [number, number]}>, size: number, fail: (m: string) => never): void {
  const ranges = Object.entries(header)
    .filter(([name]) => name !== '__metadata__')
    .map(([name, e]) => ({name, begin: e.data_offsets[0], end: e.data_offsets[1]}))
    .sort((a, b) => a.begin - b.begin || a.end - b.end)
  let at = 0
  let before = ''
  for (const r of ranges) {
    if (r.begin < at) fail(`tensor "${r.name}" (bytes ${r.begin}-${r.end}) overlaps "${before}" (ending at ${at})`)
    if (r.begin > at) fail(`${r.begin - at} bytes before tensor "${r.name}" belong to no tensor (the data must be covered exactly)`)
    at = r.end
    before = r.name
  }
  if (at !== size) fail(`${size - at} bytes after the last tensor belong to no tensor (the data must be covered exactly)`)
}

function decodeEntry(name: string, entry: unknown, dataLength: number, fail: (m: string) => never): Extent {
  const e = entry as {dtype?: unknown; shape?: unknown; data_offsets?: unknown}
  if (typeof e?.dtype !== 'string' || !(e.dtype in ITEM_SIZE)) fail(`tensor "${name}": unknown dtype ${JSON.stringify(e?.dtype)}`)
  const dtype = e.dtype as Dtype
  const shape = e.shape
  if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) fail(`tensor "${name}": bad shape ${JSON.stringify(shape)}`)
  const off = e.data_offsets
  if (!Array.isArray(off) || off.length !== 2 || !off.every((o) => Number.isInteger(o) && o >= 0) || off[0] > off[1]) {
    fail(`tensor "${name}": bad data_offsets ${JSON.stringify(off)}`)
  }
  const [begin, end] = off as [number, number]
  const want = (shape as number[]).reduce((a, b) => a * b, 1) * ITEM_SIZE[dtype]
  if (end - begin !== want) fail(`tensor "${name}": ${end - begin} bytes for shape [${(shape as number[]).join(', ')}] ${dtype}, expected ${want}`)
  if (end > dataLength) fail(`truncated data: tensor "${name}" ends at byte ${end}, the data has ${dataLength}`)
  return {dtype, shape: shape as number[], begin, end}
}

/**
 * A safetensors file's tensors. A regular file is read tensor by tensor, each into a buffer of its
 * own (`own`), so that loading a model never holds the whole file and the weights made from it side
 * by side (toFloat32 hands an F32 tensor's buffer over); anything else (a FIFO, a device) is read
 * whole, as far as LIMITS.weights.
 */
export async function readSafetensors(path: string): Promise<SafetensorsFile> {
  let fh: FileHandle | undefined
  try {
    fh = await open(path, 'r')
    const st = await fh.stat()
    if (!st.isFile()) return decodeSafetensors(await readWhole(path, 'weights'), path)
    if (st.size > LIMITS.weights) throw tooLarge(path, 'weights')
    return await readByTensor(fh, st.size, path)
  } catch (err) {
    throw readError(err, path)
  } finally {
    await fh?.close()
  }
}

/** The header, then each tensor's bytes into a buffer of its own. */
async function readByTensor(fh: FileHandle, size: number, path: string): Promise<SafetensorsFile> {
  let head = await readAt(fh, Math.min(8, size), 0, path)
  if (size >= 8) {
    const n = Number(new DataView(head.buffer, head.byteOffset, 8).getBigUint64(0, true))
    if (n <= size - 8) head = await readAt(fh, 8 + n, 0, path)
  }
  const {extents, metadata, dataStart} = decodeHeader(head, size, path)
  const tensors = new Map<string, HostTensor>()
  for (const [name, e] of extents) {
    tensors.set(name, {dtype: e.dtype, shape: e.shape, bytes: await readAt(fh, e.end - e.begin, dataStart + e.begin, path), own: true})
  }
  return {tensors, metadata}
}

/** n bytes at `position` into a new buffer; a file that ends before them (it shrank while read) is refused. */
async function readAt(fh: FileHandle, n: number, position: number, path: string): Promise<Uint8Array> {
  const out = new Uint8Array(n)
  let at = 0
  while (at < n) {
    const {bytesRead} = await fh.read(out, at, Math.min(n - at, 2 ** 30), position + at)
    if (bytesRead === 0)
      throw new SpanError(`${path}: truncated data: the file ended at byte ${position + at} while ${n - at} more bytes were read (did it change while read?)`)
    at += bytesRead
  }
  return out
}

/** The header bytes, padded with spaces to a multiple of 8 so the data is aligned. */
export function encodeHeader(tensors: [string, HostTensor][], metadata: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {}
  if (Object.keys(metadata).length > 0) header.__metadata__ = metadata
  let offset = 0
  for (const [name, t] of tensors) {
    header[name] = {dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.byteLength]}
    offset += t.bytes.byteLength
  }
  let json = JSON.stringify(header)
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8)
  const body = Buffer.from(json, 'utf-8')
  const out = new Uint8Array(8 + body.byteLength)
  new DataView(out.buffer).setBigUint64(0, BigInt(body.byteLength), true)
  out.set(body, 8)
  return out
}

/** Writes a safetensors file, tensors in the given order, streaming each tensor's bytes. */
export async function writeSafetensors(path: string, tensors: [string, HostTensor][], metadata: Record<string, string> = {}): Promise<void> {
  const fh = await open(path, 'w')
  try {
    await fh.write(encodeHeader(tensors, metadata))
    for (const [, t] of tensors) await fh.write(t.bytes)
    await fh.sync()
  } finally {
    await fh.close()
  }
}
