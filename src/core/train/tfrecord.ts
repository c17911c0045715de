/**
 * TFRecord framing and the few protobuf wire-format pieces a TensorBoard event file needs,
 * written by hand so that span needs no TensorFlow or protobuf dependency.
 *
 * A record is: uint64 length (little endian), masked CRC-32C of those 8 bytes, the data,
 * masked CRC-32C of the data (both CRCs uint32 little endian). Ported from TensorFlow's
 * tensorflow/core/lib/io/record_writer.cc (RecordWriter::PopulateHeader/PopulateFooter) and
 * tsl/lib/hash/crc32c.h (Mask/Unmask), and TensorBoard's
 * tensorboard/compat/tensorflow_stub/pywrap_tensorflow.py (masked_crc32c), pinned to
 * tensorflow@v2.15.0 and tensorboard@2.15.0; the CRC is Castagnoli's (RFC 3720 §B.4).
 */
import {pushAll} from '../util/arrays.js'

/** CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), one byte a step through a 256-entry table. */
const CRC32C_TABLE: Uint32Array = (() => {
  const t = new Uint32Array(256)
  for (let n = 0; n < 256; n++) {
    let c = n
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1
    t[n] = c >>> 0
  }
  return t
})()

export function crc32c(data: Uint8Array): number {
  let c = 0xffffffff
  for (let i = 0; i < data.length; i++) c = CRC32C_TABLE[(c ^ data[i]) & 0xff] ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const MASK_DELTA = 0xa282ead8

/** TensorFlow's masked CRC: rotate right by 15 bits, add a constant (mod 2^32). */
export function maskedCrc32c(data: Uint8Array): number {
  const crc = crc32c(data)
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + MASK_DELTA) >>> 0
}

/** One TFRecord: header (length + its masked CRC), data, footer (masked CRC of the data). */
export function frameRecord(data: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + data.length + 4)
  out.writeBigUInt64LE(BigInt(data.length), 0)
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8)
  out.set(data, 12)
  out.writeUInt32LE(maskedCrc32c(data), 12 + data.length)
  return out
}

/** Where a record failed its checks: offset of its header in the file and why. */
export class RecordError extends Error {
  constructor(
    readonly record: number,
    readonly offset: number,
    reason: string,
  ) {
    super(`record ${record} at byte ${offset}: ${reason}`)
    this.name = 'RecordError'
  }
}

/**
 * The records of a TFRecord file, each checked as TensorFlow's RecordReader does (both masked
 * CRCs, no truncation): a flipped byte anywhere is an error naming the record and its offset.
 */
export function* readRecords(buf: Uint8Array): Generator<Uint8Array> {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength)
  let off = 0
  for (let n = 1; off < view.length; n++) {
    if (view.length - off < 12) throw new RecordError(n, off, `truncated header (${view.length - off} of 12 bytes)`)
    const lenBytes = view.subarray(off, off + 8)
    if (view.readUInt32LE(off + 8) !== maskedCrc32c(lenBytes)) throw new RecordError(n, off, 'length CRC mismatch (corrupted header)')
    const len = view.readBigUInt64LE(off)
    if (len > BigInt(view.length - off - 16)) throw new RecordError(n, off, `truncated data (length ${len}, ${view.length - off - 16} bytes left)`)
    const data = view.subarray(off + 12, off + 12 + Number(len))
    if (view.readUInt32LE(off + 12 + Number(len)) !== maskedCrc32c(data)) throw new RecordError(n, off, 'data CRC mismatch (corrupted data)')
    yield data
    off += 16 + Number(len)
  }
}

// ---- protobuf wire format (https://protobuf.dev/programming-guides/encoding/) ----

export const WIRE = {varint: 0, fixed64: 1, bytes: 2, fixed32: 5} as const

/** A varint; negative int64 values are their 64-bit two's complement, 10 bytes, as protobuf says. */
export function varint(value: number | bigint): number[] {
  let v = BigInt.asUintN(64, BigInt(value))
  const out: number[] = []
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80)
    v >>= 7n
  }
  out.push(Number(v))
  return out
}

export function tag(field: number, wire: number): number[] {
  return varint((field << 3) | wire)
}

/** Builds one message field by field. */
export class ProtoWriter {
  private parts: number[] = []

  varint(field: number, value: number | bigint): this {
    pushAll(this.parts, tag(field, WIRE.varint), varint(value))
    return this
  }

  double(field: number, value: number): this {
    const b = Buffer.alloc(8)
    b.writeDoubleLE(value)
    pushAll(this.parts, tag(field, WIRE.fixed64), b)
    return this
  }

  float(field: number, value: number): this {
    const b = Buffer.alloc(4)
    b.writeFloatLE(value)
    pushAll(this.parts, tag(field, WIRE.fixed32), b)
    return this
  }

  bytes(field: number, value: Uint8Array | string): this {
    const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
    pushAll(this.parts, tag(field, WIRE.bytes), varint(b.length), b)
    return this
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.parts)
  }
}

/** One decoded field: a varint as bigint, fixed64/fixed32 and length-delimited fields as their bytes. */
export interface ProtoField {
  field: number
  wire: number
  int?: bigint
  bytes?: Uint8Array
}

function readVarint(buf: Uint8Array, pos: number): [bigint, number] {
  let v = 0n
  for (let shift = 0n; shift < 70n; shift += 7n) {
    if (pos >= buf.length) throw new Error('truncated varint')
    const b = buf[pos++]
    v |= BigInt(b & 0x7f) << shift
    if (!(b & 0x80)) return [BigInt.asUintN(64, v), pos]
  }
  throw new Error('varint longer than 10 bytes')
}

/** The fields of one message in order; unknown wire types (groups) are an error. */
export function decodeFields(buf: Uint8Array): ProtoField[] {
  const out: ProtoField[] = []
  let pos = 0
  while (pos < buf.length) {
    const [key, p] = readVarint(buf, pos)
    const field = Number(key >> 3n)
    const wire = Number(key & 7n)
    pos = p
    if (wire === WIRE.varint) {
      const [v, q] = readVarint(buf, pos)
      out.push({field, wire, int: v})
      pos = q
      continue
    }
    let len = wire === WIRE.fixed64 ? 8 : wire === WIRE.fixed32 ? 4 : -1
    if (wire === WIRE.bytes) {
      const [l, q] = readVarint(buf, pos)
      len = Number(l)
      pos = q
    }
    if (len < 0) throw new Error(`unsupported wire type ${wire} (field ${field})`)
    if (pos + len > buf.length) throw new Error(`truncated field ${field}`)
    out.push({field, wire, bytes: buf.subarray(pos, pos + len)})
    pos += len
  }
  return out
}
