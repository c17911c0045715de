// LineWriter.patient (src/core/stream/writer.ts): a training loop's metrics never wait for a slow
// reader below the bound, wait past it until the reader drains or stopWaiting(), and lose nothing.
import {Writable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {LineWriter} from '../../../src/core/stream/writer.js'

/** A stream whose reader takes nothing until read() is called: every write stays queued. */
function unread(): {stream: Writable; read(): string} {
  const held: {chunk: string; done: () => void}[] = []
  let got = ''
  const stream = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _enc, done) {
      held.push({chunk: chunk.toString(), done})
    },
  })
  const read = () => {
    while (held.length > 0) {
      const w = held.shift() as (typeof held)[number]
      got += w.chunk
      w.done() // the next queued write comes synchronously or on a later tick
    }
    return got
  }
  return {stream, read}
}

const settled = async <T>(p: Promise<T>): Promise<boolean> => {
  let done = false
  void p.then(() => (done = true))
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r))
  return done
}

describe('LineWriter.patient', () => {
  it("queues records past the stream's highWaterMark without waiting, up to its bound", async () => {
    const {stream} = unread()
    const w = new LineWriter(stream).patient(10_000)
    for (let i = 0; i < 50; i++) expect(await settled(w.record({step: i, pad: 'x'.repeat(40)}).then(() => w.flush()))).toBe(true)
    expect(stream.writableLength).toBeGreaterThan(64) // the default writer would have waited at the first
  })

  it('past the bound it waits (said once), and stopWaiting() ends the wait for good: nothing lost, in order', async () => {
    const {stream, read} = unread()
    let stalls = 0
    const w = new LineWriter(stream).patient(200, () => stalls++)
    let i = 0
    let pending: Promise<void> | null = null
    for (; i < 100 && pending === null; i++) {
      const p = w.record({step: i}).then(() => w.flush())
      if (!(await settled(p))) pending = p
    }
    expect(pending).not.toBeNull() // held at the bound
    expect(stalls).toBe(1)
    w.stopWaiting() // a stop signal
    expect(await settled(pending as Promise<void>)).toBe(true)
    for (let j = 0; j < 30; j++) expect(await settled(w.record({step: i++}).then(() => w.flush()))).toBe(true)
    expect(stalls).toBe(1)
    const end = w.end()
    const lines = read().trimEnd().split('\n')
    await end
    expect(lines.map((l) => JSON.parse(l).step)).toEqual(Array.from({length: i}, (_, k) => k))
  })

  it('a wait at the bound ends when the reader drains the stream', async () => {
    const {stream, read} = unread()
    const w = new LineWriter(stream).patient(100)
    let pending: Promise<void> | null = null
    for (let i = 0; i < 100 && pending === null; i++) {
      const p = w.record({step: i}).then(() => w.flush())
      if (!(await settled(p))) pending = p
    }
    expect(pending).not.toBeNull()
    read()
    expect(await settled(pending as Promise<void>)).toBe(true)
  })

  it("without patient() a write waits at the stream's highWaterMark, as before", async () => {
    const {stream} = unread()
    const w = new LineWriter(stream)
    expect(await settled(w.record({pad: 'x'.repeat(100)}).then(() => w.flush()))).toBe(false)
  })
})
