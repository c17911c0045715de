import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {EventWriter, FILE_VERSION, decodeEvent, encodeEvent, readEvents} from '../../../src/core/train/tensorboard.js'
import {ProtoWriter, crc32c, decodeFields, frameRecord, maskedCrc32c, readRecords, varint} from '../../../src/core/train/tfrecord.js'

const bytes = (s: string) => Buffer.from(s, 'latin1')

describe('crc32c', () => {
  it('gives the standard check value and the RFC 3720 §B.4 vectors', () => {
    expect(crc32c(bytes('123456789'))).toBe(0xe3069283)
    expect(crc32c(new Uint8Array(0))).toBe(0)
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa)
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43)
    expect(crc32c(Uint8Array.from({length: 32}, (_, i) => i))).toBe(0x46dd794e)
    expect(crc32c(Uint8Array.from({length: 32}, (_, i) => 31 - i))).toBe(0x113fdb5c)
  })

  it('masks as TensorFlow does (vectors from real event files, TensorBoard data server tests)', () => {
    // tensorflow/tensorboard@a9e1bba361fdfc525866e5bb25222dab7eac3671 tensorboard/data/server/masked_crc.rs
    // test_compute: the file_version event "CRC test, one two" as TensorFlow wrote it.
    expect(maskedCrc32c(bytes('\x1a\x11CRC test, one two'))).toBe(0x5794d08a)
    // …/tf_record.rs test_length_crc_mismatch: the masked CRC of the length 24 is 0x224b7fa3 (a3 7f 4b 22 on disk).
    expect(maskedCrc32c(bytes('\x18\0\0\0\0\0\0\0'))).toBe(0x224b7fa3)
  })
})

describe('protobuf pieces', () => {
  it('encodes varints, negative int64 as 10 bytes', () => {
    expect(varint(1)).toEqual([1])
    expect(varint(300)).toEqual([0xac, 0x02])
    expect(varint(-1)).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])
  })

  it('writes a string field byte for byte as TensorFlow did', () => {
    expect(Buffer.from(new ProtoWriter().bytes(3, 'CRC test, one two').finish())).toEqual(bytes('\x1a\x11CRC test, one two'))
  })

  it('round-trips an Event with a scalar summary', () => {
    const ev = decodeEvent(encodeEvent(1700000000.25, 1234567890123, {scalars: [['train/loss', 2.5]]}))
    expect(ev).toEqual({wallTime: 1700000000.25, step: 1234567890123, scalars: [{tag: 'train/loss', value: 2.5}]})
    const version = decodeEvent(encodeEvent(1.5, 0, {fileVersion: FILE_VERSION}))
    expect(version.fileVersion).toBe('brain.Event:2')
    expect(decodeEvent(encodeEvent(0, -3, {})).step).toBe(-3)
  })

  it('hand-decodes the Event layout: wall_time 1 double, step 2 varint, summary 5 → value 1 → tag 1, simple_value 2 float', () => {
    const fields = decodeFields(encodeEvent(2, 7, {scalars: [['a', 0.5]]}))
    expect(fields.map((f) => [f.field, f.wire])).toEqual([
      [1, 1],
      [2, 0],
      [5, 2],
    ])
    const value = decodeFields(decodeFields(fields[2].bytes!)[0].bytes!)
    expect(value.map((f) => [f.field, f.wire])).toEqual([
      [1, 2],
      [2, 5],
    ])
    expect(Buffer.from(value[1].bytes!).readFloatLE(0)).toBe(0.5)
  })
})

describe('TFRecord framing', () => {
  it('frames length, masked CRCs and data, and reads them back', () => {
    const data = bytes('123456789abcdef012345678')
    const rec = frameRecord(data)
    expect(rec.length).toBe(16 + 24)
    expect(rec.subarray(0, 12)).toEqual(bytes('\x18\0\0\0\0\0\0\0\xa3\x7f\x4b\x22'))
    expect(rec.readUInt32LE(36)).toBe(maskedCrc32c(data))
    expect([...readRecords(Buffer.concat([rec, frameRecord(bytes('x'))]))].map((r) => Buffer.from(r).toString())).toEqual(['123456789abcdef012345678', 'x'])
  })

  it('detects every corrupted byte, in header, data or footer, and truncation', () => {
    const file = Buffer.concat([frameRecord(bytes('first record')), frameRecord(bytes('second'))])
    for (let i = 0; i < file.length; i++) {
      const bad = Buffer.from(file)
      bad[i] ^= 0x20
      expect(() => [...readRecords(bad)], `byte ${i}`).toThrow(/record [12] at byte (0|28): .*(CRC mismatch|truncated)/)
    }
    expect(() => [...readRecords(file.subarray(0, file.length - 1))]).toThrow(/record 2 at byte 28: truncated data/)
    expect(() => [...readRecords(file.subarray(0, 30))]).toThrow(/record 2 at byte 28: truncated header/)
  })
})

describe('EventWriter', () => {
  const dirs: string[] = []
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'span-tb-'))
    dirs.push(d)
    return d
  }
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, {recursive: true, force: true})))

  it('writes a file TensorBoard finds, starting with the version event, scalars in order', async () => {
    const dir = join(tmp(), 'runs', 'a')
    const before = Date.now() / 1000
    const w = await EventWriter.open(dir)
    w.scalar('train/loss', 3.25, 1)
    w.scalar('train/lr', 1e-4, 1)
    await w.flush()
    w.scalar('dev/f1', 71.5, 10)
    await w.close()
    const [name] = readdirSync(dir)
    expect(name).toMatch(new RegExp(`^events\\.out\\.tfevents\\.\\d{10}\\.${hostname().replace(/\W/g, '\\$&')}$`))
    expect(Number(name.split('.')[3])).toBeCloseTo(before, -1)
    const events = await readEvents(join(dir, name))
    expect(events[0]).toMatchObject({step: 0, fileVersion: 'brain.Event:2', scalars: []})
    expect(events[0].wallTime).toBeGreaterThanOrEqual(before - 1)
    expect(events.slice(1).map((e) => [e.step, e.scalars])).toEqual([
      [1, [{tag: 'train/loss', value: 3.25}]],
      [1, [{tag: 'train/lr', value: Math.fround(1e-4)}]],
      [10, [{tag: 'dev/f1', value: 71.5}]],
    ])
  })

  it('gives two writers opened in the same second two files', async () => {
    const dir = tmp()
    const [a, b] = await Promise.all([EventWriter.open(dir), EventWriter.open(dir)])
    expect(a.path).not.toBe(b.path)
    await Promise.all([a.close(), b.close()])
    expect(readdirSync(dir)).toHaveLength(2)
  })

  it('a reader checks every masked CRC: one flipped byte anywhere in a written file is an error', async () => {
    const dir = tmp()
    const w = await EventWriter.open(dir)
    for (let s = 1; s <= 3; s++) w.scalar('loss', 1 / s, s)
    await w.close()
    const path = join(dir, readdirSync(dir)[0])
    const good = readFileSync(path)
    for (let i = 0; i < good.length; i++) {
      const bad = Buffer.from(good)
      bad[i] ^= 0x01
      writeFileSync(path, bad)
      await expect(readEvents(path), `byte ${i}`).rejects.toThrow(/record \d+ at byte \d+: .*(CRC mismatch|truncated)/)
    }
  })

  it('refuses a non-integer step and scalars after close', async () => {
    const w = await EventWriter.open(tmp())
    expect(() => w.scalar('x', 1, 1.5)).toThrow(/integer/)
    await w.close()
    expect(() => w.scalar('x', 1, 2)).toThrow(/after close/)
  })
})
