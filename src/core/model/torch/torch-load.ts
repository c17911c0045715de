import {SpanError} from '../../stream/errors.js'
import type {HostTensor} from '../safetensors.js'
import {type PickledStorage, type PickledTensor, STORAGE_DTYPES, type TorchDtype, unpickle} from './pickle.js'
import {isZip, readZipDirectory, zipEntryData} from './zip.js'
import {readError} from '../../util/fs-errors.js'
import {readWhole} from '../../util/read-whole.js'

/**
 * `pytorch_model.bin` without Python: both torch.save formats (torch/serialization.py,
 * `_load` for the zip archive of torch ≥ 1.6 and `_legacy_load` for the pickle stream
 * before it). Tensors come out contiguous (views and shared storages copied out), in
 * their stored dtype; callers convert to float32 (toFloat32).
 */
export const ITEM_SIZE: Record<TorchDtype, number> = {F64: 8, F32: 4, F16: 2, BF16: 2, I64: 8, I32: 4, I16: 2, I8: 1, U8: 1, BOOL: 1}

/** The legacy format's first pickle (torch/serialization.py MAGIC_NUMBER). */
const LEGACY_MAGIC = 0x1950a86a20f9469cfc6cn

export async function readTorchFile(path: string): Promise<Map<string, HostTensor>> {
  let buf: Buffer
  try {
    buf = await readWhole(path, 'weights')
  } catch (err) {
    throw readError(err, path)
  }
  return decodeTorch(buf, path)
}

/** A torch.save file's state dict: the zip archive or the legacy stream, by its first bytes. */
export function decodeTorch(buf: Uint8Array, source: string): Map<string, HostTensor> {
  return isZip(buf) ? decodeZip(buf, source) : decodeLegacy(buf, source)
}

/** A storage persistent id: ('storage', storage_type, key, location, numel[, view_metadata]). */
function storageFromPid(pid: unknown, source: string): PickledStorage {
  const t = pid as unknown[]
  const type = t?.[1] as {kind?: string; name?: string} | undefined
  if (!Array.isArray(t) || t[0] !== 'storage' || type?.kind !== 'global' || !(String(type.name) in STORAGE_DTYPES)) {
    throw new SpanError(`${source}: unexpected persistent id ${JSON.stringify(Array.isArray(t) ? t[0] : t)} (not a torch storage)`)
  }
  const numel = Number(t[4])
  if (!Number.isInteger(numel) || numel < 0) throw new SpanError(`${source}: storage ${String(t[2])} has a bad size`)
  const view = t[5] as [string, number, number] | null | undefined
  const dtype = STORAGE_DTYPES[String(type.name)]
  return view
    ? {kind: 'storage', dtype, key: String(t[2]), numel: Number(view[2]), viewOffset: Number(view[1])}
    : {kind: 'storage', dtype, key: String(t[2]), numel, viewOffset: 0}
}

function decodeZip(buf: Uint8Array, source: string): Map<string, HostTensor> {
  const entries = readZipDirectory(buf, source)
  const pkl = [...entries.keys()].find((n) => n.endsWith('/data.pkl') || n === 'data.pkl')
  if (!pkl) throw new SpanError(`${source}: a zip archive without data.pkl (not a torch.save file)`)
  const prefix = pkl.slice(0, pkl.length - 'data.pkl'.length)
  const {value} = unpickle(zipEntryData(buf, entries.get(pkl)!, source), 0, source, (pid) => storageFromPid(pid, source))
  const storage = (s: PickledStorage): Uint8Array => {
    const e = entries.get(`${prefix}data/${s.key}`)
    if (!e) throw new SpanError(`${source}: storage ${s.key} is missing from the archive`)
    return zipEntryData(buf, e, source)
  }
  return stateDict(value, storage, source)
}

/**
 * The legacy stream: pickles of the magic number, the protocol version and sys_info, then
 * the object, then the list of storage keys, then each storage as an int64 element count
 * and its raw bytes, in that order.
 */
function decodeLegacy(buf: Uint8Array, source: string): Map<string, HostTensor> {
  if (buf.byteLength < 2 || buf[0] !== 0x80) throw new SpanError(`${source}: not a PyTorch checkpoint (neither a zip archive nor a pickle stream)`)
  const noPid = (): never => {
    throw new SpanError(`${source}: unexpected persistent id in the header`)
  }
  const magic = unpickle(buf, 0, source, noPid)
  if (magic.value !== LEGACY_MAGIC) throw new SpanError(`${source}: wrong magic number (not a torch.save file)`)
  const proto = unpickle(buf, magic.end, source, noPid)
  if (proto.value !== 1001) throw new SpanError(`${source}: unsupported legacy protocol version ${String(proto.value)}`)
  const sys = unpickle(buf, proto.end, source, noPid)
  if ((sys.value as Map<string, unknown>)?.get?.('little_endian') === false) throw new SpanError(`${source}: a big-endian checkpoint is not supported`)
  const main = unpickle(buf, sys.end, source, (pid) => storageFromPid(pid, source))
  const keys = unpickle(buf, main.end, source, noPid)
  if (!Array.isArray(keys.value)) throw new SpanError(`${source}: corrupt legacy checkpoint (no storage key list)`)
  const storages = legacyStorages(buf, keys.end, keys.value as string[], main.value, source)
  return stateDict(main.value, (s) => storages.get(s.key)!, source)
}

/** The raw storages after the key list: int64 element count, then count × item size bytes each. */
function legacyStorages(buf: Uint8Array, start: number, keys: string[], obj: unknown, source: string): Map<string, Uint8Array> {
  const dtypes = new Map<string, TorchDtype>()
  for (const t of tensorsOf(obj)) dtypes.set(t.storage.key, t.storage.dtype)
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const out = new Map<string, Uint8Array>()
  let p = start
  for (const key of keys) {
    if (p + 8 > buf.byteLength) throw new SpanError(`${source}: truncated legacy checkpoint (storage ${key} is missing)`)
    const n = Number(dv.getBigInt64(p, true))
    const bytes = n * ITEM_SIZE[dtypes.get(key) ?? 'F32']
    if (n < 0 || p + 8 + bytes > buf.byteLength) throw new SpanError(`${source}: truncated legacy checkpoint (storage ${key} runs past the end of the file)`)
    out.set(key, buf.subarray(p + 8, p + 8 + bytes))
    p += 8 + bytes
  }
  return out
}

function* tensorsOf(obj: unknown): Generator<PickledTensor> {
  if (obj instanceof Map) for (const v of obj.values()) yield* tensorsOf(v)
  else if ((obj as PickledTensor)?.kind === 'tensor') yield obj as PickledTensor
}

/**
 * The name → tensor map of the unpickled object: a state dict, or a dict holding one under
 * `state_dict` or `model` (training checkpoints). Non-tensor entries are skipped.
 */
function stateDict(obj: unknown, storage: (s: PickledStorage) => Uint8Array, source: string): Map<string, HostTensor> {
  if (!(obj instanceof Map)) throw new SpanError(`${source}: the checkpoint holds no state dict`)
  const inner = obj.get('state_dict') ?? obj.get('model')
  if (inner instanceof Map) return stateDict(inner, storage, source)
  const cache = new Map<string, Uint8Array>()
  const out = new Map<string, HostTensor>()
  for (const [name, v] of obj) {
    const t = v as PickledTensor
    if (t?.kind !== 'tensor') continue
    if (!cache.has(t.storage.key)) cache.set(t.storage.key, storage(t.storage))
    out.set(String(name), materialise(String(name), t, cache.get(t.storage.key)!, source))
  }
  return out
}

/**
 * The most elements a view may have beyond its storage's (a stride-0 expansion, such as BERT's
 * position_ids = arange(512).expand(1, -1), or overlapping strides): copied out, a 6 MB file of
 * one byte expanded to 40000×40000 would be 1.6 GB and 1.6e9 steps (issue 25, cause 6).
 */
export const MAX_EXPANDED = 2 ** 24

/** A contiguous copy of the view (offset, size, stride) into its storage, after checking it fits. */
export function materialise(name: string, t: PickledTensor, data: Uint8Array, source: string): HostTensor {
  const item = ITEM_SIZE[t.storage.dtype]
  const have = Math.floor(data.byteLength / item)
  if (t.storage.numel + t.storage.viewOffset > have) {
    throw new SpanError(`${source}: tensor "${name}": its storage ${t.storage.key} should hold ${t.storage.numel} elements, the file has ${have}`)
  }
  const n = t.size.reduce((a, b) => a * b, 1)
  const last = n === 0 ? 0 : t.size.reduce((a, s, i) => a + (s - 1) * t.stride[i], t.offset) + 1
  if (last > t.storage.numel) {
    throw new SpanError(
      `${source}: tensor "${name}": shape [${t.size.join(', ')}] at offset ${t.offset} does not fit its storage of ${t.storage.numel} elements`,
    )
  }
  if (n > t.storage.numel && n > MAX_EXPANDED) {
    throw new SpanError(
      `${source}: tensor "${name}": a view of ${n} elements (shape [${t.size.join(', ')}], stride [${t.stride.join(', ')}]) over a storage of ${t.storage.numel}: an expansion past ${MAX_EXPANDED} elements is refused (span copies views out)`,
    )
  }
  const base = t.storage.viewOffset * item
  if (isContiguous(t.size, t.stride)) {
    return {dtype: t.storage.dtype, shape: t.size, bytes: data.slice(base + t.offset * item, base + (t.offset + n) * item)}
  }
  const out = new Uint8Array(n * item)
  let k = 0
  for (const index of stridedIndices(t.size, t.stride, t.offset)) {
    out.set(data.subarray(base + index * item, base + (index + 1) * item), k * item)
    k++
  }
  return {dtype: t.storage.dtype, shape: t.size, bytes: out}
}

function isContiguous(size: number[], stride: number[]): boolean {
  let want = 1
  for (let d = size.length - 1; d >= 0; d--) {
    if (size[d] !== 1 && stride[d] !== want) return false
    want *= size[d]
  }
  return true
}

/** Storage element indices of a strided view, in row-major order. */
function* stridedIndices(size: number[], stride: number[], offset: number): Generator<number> {
  const n = size.reduce((a, b) => a * b, 1)
  if (n === 0) return
  const idx = new Array<number>(size.length).fill(0)
  for (let k = 0; k < n; k++) {
    yield idx.reduce((a, v, i) => a + v * stride[i], offset)
    for (let d = size.length - 1; d >= 0; d--) {
      if (++idx[d] < size[d]) break
      idx[d] = 0
    }
  }
}
