import {open} from 'node:fs/promises'

/**
 * A stored (uncompressed) zip archive, written the way torch.save writes its own
 * (caffe2/serialize/inline_container.cc, PyTorchStreamWriter): every entry's data aligned to
 * 64 bytes by padding the local header's extra field, CRC-32 of each entry, then the central
 * directory and its end record (APPNOTE 6.3.x §4.3). Sizes stay below 4 GiB (no zip64).
 */
export interface ZipInput {
  name: string
  data: Uint8Array
}

const ALIGN = 64

const CRC_TABLE = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

export function crc32(data: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < data.length; i++) c = CRC_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

/** The local header of an entry at `offset`, padded so its data starts on a 64-byte boundary. */
function localHeader(name: Uint8Array, e: ZipInput, crc: number, offset: number): Uint8Array {
  const base = 30 + name.length + 4 // the padding extra field has a 4-byte header of its own
  const pad = (ALIGN - ((offset + base) % ALIGN)) % ALIGN
  const h = new Uint8Array(base + pad)
  const dv = new DataView(h.buffer)
  dv.setUint32(0, 0x04034b50, true)
  dv.setUint16(4, 20, true) // version needed
  dv.setUint32(14, crc, true)
  dv.setUint32(18, e.data.length, true)
  dv.setUint32(22, e.data.length, true)
  dv.setUint16(26, name.length, true)
  dv.setUint16(28, 4 + pad, true)
  h.set(name, 30)
  dv.setUint16(30 + name.length, 0x4246, true) // 'FB', the id torch uses for its padding field
  dv.setUint16(32 + name.length, pad, true)
  return h
}

function centralHeader(name: Uint8Array, e: ZipInput, crc: number, offset: number): Uint8Array {
  const h = new Uint8Array(46 + name.length)
  const dv = new DataView(h.buffer)
  dv.setUint32(0, 0x02014b50, true)
  dv.setUint16(4, 20, true)
  dv.setUint16(6, 20, true)
  dv.setUint32(16, crc, true)
  dv.setUint32(20, e.data.length, true)
  dv.setUint32(24, e.data.length, true)
  dv.setUint16(28, name.length, true)
  dv.setUint32(42, offset, true)
  h.set(name, 46)
  return h
}

function endRecord(count: number, size: number, offset: number): Uint8Array {
  const h = new Uint8Array(22)
  const dv = new DataView(h.buffer)
  dv.setUint32(0, 0x06054b50, true)
  dv.setUint16(8, count, true)
  dv.setUint16(10, count, true)
  dv.setUint32(12, size, true)
  dv.setUint32(16, offset, true)
  return h
}

/** Writes the entries into a stored zip at path, in order, and syncs it. */
export async function writeZip(path: string, entries: ZipInput[]): Promise<void> {
  const fh = await open(path, 'w')
  try {
    let offset = 0
    const central: Uint8Array[] = []
    for (const e of entries) {
      const name = new TextEncoder().encode(e.name)
      const crc = crc32(e.data)
      const local = localHeader(name, e, crc, offset)
      central.push(centralHeader(name, e, crc, offset))
      await fh.write(local)
      await fh.write(e.data)
      offset += local.length + e.data.length
    }
    let size = 0
    for (const c of central) {
      await fh.write(c)
      size += c.length
    }
    await fh.write(endRecord(entries.length, size, offset))
    await fh.sync()
  } finally {
    await fh.close()
  }
}
