import {type FileHandle, open} from 'node:fs/promises'
import {SpanError} from '../../stream/errors.js'
import type {HostTensor} from '../safetensors.js'
import {type PickledStorage, type PickledTensor, STORAGE_DTYPES, type TorchDtype, TruncatedPickle, unpickle} from './pickle.js'
import {type ByteSource, bufferSource, isZip, readZipDirectory, zipEntryData} from './zip.js'
import {fileSource} from './file-source.js'
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

/**
 * A `pytorch_model.bin`'s state dict. A regular file is read where its parts lie (fileSource): the
 * zip archive's central directory from its end, data.pkl alone, then each storage into a buffer of
 * its own; the legacy stream's pickles from its front, then each storage at its offset. So no
 * Buffer of the whole file is made (a file over 4 GB loads), and a tensor that is the whole of a
 * storage no other tensor uses takes that buffer (`own`: toFloat32 hands F32 over, no copy).
 * Anything else (a FIFO, a device, stdin) is read whole, as far as LIMITS.weights.
 */
export async function readTorchFile(path: string): Promise<Map<string, HostTensor>> {
  let fh: FileHandle | undefined
  try {
    let size = 0
    try {
      fh = await open(path, 'r')
      const st = await fh.stat()
      if (!st.isFile()) return decodeTorch(await readWhole(path, 'weights'), path)
      size = st.size
    } catch (err) {
      throw readError(err, path)
    }
    return decodeSource(fileSource(fh.fd, size, path), path, true)
  } finally {
    await fh?.close()
  }
}

/** A torch.save file's state dict: the zip archive or the legacy stream, by its first bytes. */
export function decodeTorch(buf: Uint8Array, source: string): Map<string, HostTensor> {
  return decodeSource(bufferSource(buf), source, false)
}

/** own: every read of src is a buffer of its own (a file's), which a tensor may take as it is. */
function decodeSource(src: ByteSource, source: string, own: boolean): Map<string, HostTensor> {
  return isZip(src.at(0, Math.min(4, src.size))) ? decodeZip(src, source, own) : decodeLegacy(src, source, own)
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

function decodeZip(src: ByteSource, source: string, own: boolean): Map<string, HostTensor> {
  const entries = readZipDirectory(src, source)
  const pkl = [...entries.keys()].find((n) => n.endsWith('/data.pkl') || n === 'data.pkl')
  if (!pkl) throw new SpanError(`${source}: a zip archive without data.pkl (not a torch.save file)`)
  const prefix = pkl.slice(0, pkl.length - 'data.pkl'.length)
  const {value} = unpickle(zipEntryData(src, entries.get(pkl)!, source), 0, source, (pid) => storageFromPid(pid, source))
  const storage = (s: PickledStorage): Uint8Array => {
    const e = entries.get(`${prefix}data/${s.key}`)
    if (!e) throw new SpanError(`${source}: storage ${s.key} is missing from the archive`)
    return zipEntryData(src, e, source)
  }
  return stateDict(value, storage, source, own)
}

/**
 * The legacy stream: pickles of the magic number, the protocol version and sys_info, then
 * the object, then the list of storage keys, then each storage as an int64 element count
 * and its raw bytes, in that order.
 */
function decodeLegacy(src: ByteSource, source: string, own: boolean): Map<string, HostTensor> {
  if (src.size < 2 || src.at(0, 1)[0] !== 0x80) throw new SpanError(`${source}: not a PyTorch checkpoint (neither a zip archive nor a pickle stream)`)
  const {main, keys, end} = legacyHeader(src, source)
  const extents = legacyStorages(src, end, keys, main, source)
  const storage = (s: PickledStorage): Uint8Array => {
    const x = extents.get(s.key)
    if (!x) throw new SpanError(`${source}: corrupt legacy checkpoint (storage ${s.key} is not in its storage key list)`)
    return src.at(x.start, x.bytes)
  }
  return stateDict(main, storage, source, own)
}

/** The first read of the legacy stream's pickles; doubled while they run past it. */
const LEGACY_PREFIX = 2 ** 16

/**
 * The legacy stream's five pickles, parsed from a prefix of the source that grows (doubling, up
 * to the whole) while they run past its end: a state dict's pickles are tens of kilobytes at the
 * front of a file of gigabytes. Any other refusal is the same at every prefix that holds it.
 */
function legacyHeader(src: ByteSource, source: string): {main: unknown; keys: string[]; end: number} {
  for (let n = Math.min(src.size, LEGACY_PREFIX); ; n = Math.min(src.size, 2 * n)) {
    try {
      return legacyPickles(src.at(0, n), source)
    } catch (err) {
      if (!(err instanceof TruncatedPickle) || n === src.size) throw err
    }
  }
}

function legacyPickles(buf: Uint8Array, source: string): {main: unknown; keys: string[]; end: number} {
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
  return {main: main.value, keys: keys.value as string[], end: keys.end}
}

/** Where each raw storage lies after the key list: int64 element count, then count × item size bytes each. */
function legacyStorages(src: ByteSource, start: number, keys: string[], obj: unknown, source: string): Map<string, {start: number; bytes: number}> {
  const dtypes = new Map<string, TorchDtype>()
  for (const t of tensorsOf(obj)) dtypes.set(t.storage.key, t.storage.dtype)
  const out = new Map<string, {start: number; bytes: number}>()
  let p = start
  for (const key of keys) {
    if (p + 8 > src.size) throw new SpanError(`${source}: truncated legacy checkpoint (storage ${key} is missing)`)
    const count = src.at(p, 8)
    const n = Number(new DataView(count.buffer, count.byteOffset, 8).getBigInt64(0, true))
    const bytes = n * ITEM_SIZE[dtypes.get(key) ?? 'F32']
    if (n < 0 || p + 8 + bytes > src.size) throw new SpanError(`${source}: truncated legacy checkpoint (storage ${key} runs past the end of the file)`)
    out.set(key, {start: p + 8, bytes})
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
 * `state_dict` or `model` (training checkpoints). Non-tensor entries are skipped. Each storage is
 * read once, when its first tensor comes, and let go after its last. own: the storages read are
 * buffers of their own; a tensor that is the whole of a storage no other tensor of the state dict
 * uses takes it as it is, any other (a view, a storage shared as tied weights are) is copied out.
 */
function stateDict(obj: unknown, storage: (s: PickledStorage) => Uint8Array, source: string, own: boolean): Map<string, HostTensor> {
  if (!(obj instanceof Map)) throw new SpanError(`${source}: the checkpoint holds no state dict`)
  const inner = obj.get('state_dict') ?? obj.get('model')
  if (inner instanceof Map) return stateDict(inner, storage, source, own)
  const tensors = [...obj].filter(([, v]) => (v as PickledTensor)?.kind === 'tensor') as [unknown, PickledTensor][]
  const users = new Map<string, number>()
  for (const [, t] of tensors) users.set(t.storage.key, (users.get(t.storage.key) ?? 0) + 1)
  const sole = new Set([...users].filter(([, n]) => n === 1).map(([key]) => key))
  const cache = new Map<string, Uint8Array>()
  const out = new Map<string, HostTensor>()
  for (const [name, t] of tensors) {
    const key = t.storage.key
    const data = cache.get(key) ?? storage(t.storage)
    users.set(key, users.get(key)! - 1)
    if (users.get(key)! > 0) cache.set(key, data)
    else cache.delete(key)
    out.set(String(name), materialise(String(name), t, data, source, own && sole.has(key)))
  }
  return out
}

/**
 * The most elements a view may have beyond its storage's (a stride-0 expansion, such as BERT's
 * position_ids = arange(512).expand(1, -1), or overlapping strides): copied out, a 6 MB file of
 * one byte expanded to 40000×40000 would be 1.6 GB and 1.6e9 steps (issue 25, cause 6).
 */
export const MAX_EXPANDED = 2 ** 24

/**
 * The view (offset, size, stride) into its storage as a contiguous tensor, after checking it
 * fits: the storage's bytes as they are when `take` (they are a buffer of their own that no other
 * tensor uses) and the view is all of them in order, else a copy.
 */
export function materialise(name: string, t: PickledTensor, data: Uint8Array, source: string, take = false): HostTensor {
  const item = ITEM_SIZE[t.storage.dtype]
  const n = checkView(name, t, data, source)
  const base = t.storage.viewOffset * item
  if (isContiguous(t.size, t.stride)) {
    if (take && base === 0 && t.offset === 0 && n * item === data.byteLength) return {dtype: t.storage.dtype, shape: t.size, bytes: data, own: true}
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

/** The view's element count, after checking that its storage holds what it says and the view fits in it. */
function checkView(name: string, t: PickledTensor, data: Uint8Array, source: string): number {
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
  return n
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
