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

/** True when the bytes start like a zip archive (a local file header). */
export const isZip = (buf: Uint8Array): boolean => buf.byteLength >= 4 && buf[0] === 0x50 && buf[1] === 0x4b && buf[2] === 3 && buf[3] === 4

function view(buf: Uint8Array): DataView {
  return new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
}

/** Where the central directory lies and how many entries it has (zip64 when the record says so). */
function findDirectory(buf: Uint8Array, fail: (m: string) => never): {offset: number; count: number} {
  const dv = view(buf)
  let at = -1
  for (let i = buf.byteLength - 22; i >= Math.max(0, buf.byteLength - 22 - 0xffff); i--) {
    if (dv.getUint32(i, true) === EOCD) {
      at = i
      break
    }
  }
  if (at < 0) fail('truncated or not a zip archive (no end of central directory record)')
  let count = dv.getUint16(at + 10, true)
  let offset = dv.getUint32(at + 16, true)
  if ((count === 0xffff || offset === 0xffffffff) && at >= 20 && dv.getUint32(at - 20, true) === ZIP64_LOCATOR) {
    const z = Number(dv.getBigUint64(at - 12, true))
    if (z + 56 > buf.byteLength || dv.getUint32(z, true) !== ZIP64_EOCD) fail('corrupt zip64 end of central directory record')
    count = Number(dv.getBigUint64(z + 32, true))
    offset = Number(dv.getBigUint64(z + 48, true))
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
        const v = Number(dv.getBigUint64(q, true))
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

/** Every entry of the archive by name, from the central directory. */
export function readZipDirectory(buf: Uint8Array, source: string): Map<string, ZipEntry> {
  const fail = (m: string): never => {
    throw new SpanError(`${source}: ${m}`)
  }
  const dv = view(buf)
  const {offset, count} = findDirectory(buf, fail)
  const out = new Map<string, ZipEntry>()
  let p = offset
  for (let i = 0; i < count; i++) {
    if (p + 46 > buf.byteLength || dv.getUint32(p, true) !== CENTRAL) fail(`corrupt zip: central directory entry ${i} is missing`)
    const nameLen = dv.getUint16(p + 28, true)
    const extraLen = dv.getUint16(p + 30, true)
    const commentLen = dv.getUint16(p + 32, true)
    const name = new TextDecoder().decode(buf.subarray(p + 46, p + 46 + nameLen))
    const e: ZipEntry = {
      name,
      method: dv.getUint16(p + 10, true),
      compressedSize: dv.getUint32(p + 20, true),
      size: dv.getUint32(p + 24, true),
      localOffset: dv.getUint32(p + 42, true),
    }
    zip64Extra(dv, p + 46 + nameLen, p + 46 + nameLen + extraLen, e)
    out.set(name, e)
    p += 46 + nameLen + extraLen + commentLen
  }
  return out
}

/** An entry's bytes (a view for stored entries, inflated for deflated ones), checked against the archive's extent. */
export function zipEntryData(buf: Uint8Array, e: ZipEntry, source: string): Uint8Array {
  const fail = (m: string): never => {
    throw new SpanError(`${source}: ${e.name}: ${m}`)
  }
  const dv = view(buf)
  const p = e.localOffset
  if (p + 30 > buf.byteLength || dv.getUint32(p, true) !== LOCAL) fail('corrupt zip: no local header where the directory says')
  const start = p + 30 + dv.getUint16(p + 26, true) + dv.getUint16(p + 28, true)
  if (start + e.compressedSize > buf.byteLength) fail(`truncated zip: the entry ends at byte ${start + e.compressedSize}, the file has ${buf.byteLength}`)
  const raw = buf.subarray(start, start + e.compressedSize)
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
