import {inflateRawSync} from 'node:zlib'
import {SpanError} from '../../stream/errors.js'

/**
 * A zip archive read from its central directory (PKWARE APPNOTE 6.3.x §4.3): the end of
 * central directory record (and its zip64 form when a field overflows), one central header
 * per entry, and each entry's local header in front of its data. Entries are stored (0) or
 * deflated (8); torch.save writes them stored, 64-byte aligned.
 */
export interface ZipEntry {
  name: string
  method: number
  compressedSize: number
  size: number
  localOffset: number
}

const EOCD = 0x06054b50
const ZIP64_LOCATOR = 0x07064b50
const ZIP64_EOCD = 0x06064b50
const CENTRAL = 0x02014b50
const LOCAL = 0x04034b50

/**
 * Random access to an archive's bytes: a buffer in memory (`bufferSource`, every read a view of it) or
 * a regular file read where needed (torch-file.ts, every read a new buffer of its own). `at` is only
 * asked for bytes that lie within `size`.
 */
export interface ByteSource {
  readonly size: number
  at(position: number, n: number): Uint8Array
}

export const bufferSource = (buf: Uint8Array): ByteSource => ({size: buf.byteLength, at: (p, n) => buf.subarray(p, p + n)})

/** True when the bytes start like a zip archive (a local file header). */
export const isZip = (buf: Uint8Array): boolean => buf.byteLength >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 3 && buf[3] === 4

function view(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
}

/**
 * Where the central directory lies and how many entries it has (zip64 when the record says so):
 * the end record is looked for in the last 22 + 65,535 bytes (its comment's longest), the zip64
 * locator in the 20 bytes before it.
 */
function findDirectory(src: ByteSource, fail: (m: string) => never): {offset: number; count: number} {
  const tailStart = Math.max(0, src.size - 22 - 0xffff)
  const tail = view(src.at(tailStart, src.size - tailStart))
  let at = -1
  for (let i = src.size - 22; i >= tailStart; i--) {
    if (tail.getUint32(i - tailStart, true) === EOCD) {
      at = i
      break
    }
  }
  if (at < 0) fail('truncated or not a zip archive (no end of central directory record)')
  let count = tail.getUint16(at - tailStart + 10, true)
  let offset = tail.getUint32(at - tailStart + 16, true)
  const locator = (count === 0xffff || offset === 0xffffffff) && at >= 20 ? view(src.at(at - 20, 20)) : null
  if (locator?.getUint32(0, true) === ZIP64_LOCATOR) {
    const z = Number(locator.getBigUint64(8, true))
    const record = z + 56 > src.size ? null : view(src.at(z, 56))
    if (record?.getUint32(0, true) !== ZIP64_EOCD) fail('corrupt zip64 end of central directory record')
    count = Number(record!.getBigUint64(32, true))
    offset = Number(record!.getBigUint64(48, true))
  }
  if (offset > at) fail(`corrupt zip: central directory at byte ${offset} lies past its end record at ${at}`)
  return {offset, count}
}

/** The zip64 extended information extra field (0x0001): the 64-bit values of the fields that overflowed. */
function zip64Extra(dv: DataView, start: number, end: number, e: ZipEntry): void {
  for (let p = start; p + 4 <= end;) {
    const id = dv.getUint16(p, true)
    const len = dv.getUint16(p + 2, true)
    if (id === 1) {
      let q = p + 4
      const next = (): number => {
        const v = q + 8 <= end ? Number(dv.getBigUint64(q, true)) : 0xffffffff // a field cut short keeps its 32-bit value
        q += 8
        return v
      }
      if (e.size === 0xffffffff) e.size = next()
      if (e.compressedSize === 0xffffffff) e.compressedSize = next()
      if (e.localOffset === 0xffffffff) e.localOffset = next()
    }
    p += 4 + len
  }
}

/** Every entry of the archive by name, from the central directory (each header read on its own). */
export function readZipDirectory(src: ByteSource, source: string): Map<string, ZipEntry> {
  const fail = (m: string): never => {
    throw new SpanError(`${source}: ${m}`)
  }
  const {offset, count} = findDirectory(src, fail)
  const out = new Map<string, ZipEntry>()
  let p = offset
  for (let i = 0; i < count; i++) {
    const head = p + 46 > src.size ? null : view(src.at(p, 46))
    if (head?.getUint32(0, true) !== CENTRAL) fail(`corrupt zip: central directory entry ${i} is missing`)
    const [nameLen, extraLen, commentLen] = [28, 30, 32].map((k) => head!.getUint16(k, true))
    const rest = src.at(p + 46, Math.min(nameLen + extraLen, src.size - p - 46)) // a name or extra field cut off by the end is read as far as it goes
    const e: ZipEntry = {
      name: new TextDecoder().decode(rest.subarray(0, nameLen)),
      method: head!.getUint16(10, true),
      compressedSize: head!.getUint32(20, true),
      size: head!.getUint32(24, true),
      localOffset: head!.getUint32(42, true),
    }
    zip64Extra(view(rest), nameLen, rest.byteLength, e)
    out.set(e.name, e)
    p += 46 + nameLen + extraLen + commentLen
  }
  return out
}

/**
 * An entry's bytes (stored: as read from the source; deflated: inflated), checked against the
 * archive's extent. From a file source they fill a buffer of their own.
 */
export function zipEntryData(src: ByteSource, e: ZipEntry, source: string): Uint8Array {
  const fail = (m: string): never => {
    throw new SpanError(`${source}: ${e.name}: ${m}`)
  }
  const p = e.localOffset
  const local = p + 30 > src.size ? null : view(src.at(p, 30))
  if (local?.getUint32(0, true) !== LOCAL) fail('corrupt zip: no local header where the directory says')
  const start = p + 30 + local!.getUint16(26, true) + local!.getUint16(28, true)
  if (start + e.compressedSize > src.size) fail(`truncated zip: the entry ends at byte ${start + e.compressedSize}, the file has ${src.size}`)
  const raw = src.at(start, e.compressedSize)
  if (e.method === 0) return raw
  if (e.method !== 8) fail(`compression method ${e.method} is not supported (only stored and deflate)`)
  let out: Buffer
  try {
    out = inflateRawSync(raw)
  } catch (err) {
    return fail(`corrupt deflate data (${(err as Error).message})`)
  }
  if (out.byteLength !== e.size) fail(`inflated to ${out.byteLength} bytes, the directory says ${e.size}`)
  return out
}
