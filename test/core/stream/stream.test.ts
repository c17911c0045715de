import {PassThrough, Readable, Writable} from 'node:stream'
import {describe, expect, it} from 'vitest'
import {
  LineWriter,
  PipeClosed,
  SpanError,
  nextHeader,
  openStage,
  readLines,
  readNdjson,
  type Header,
  type Source,
} from '../../../src/core/stream/index.js'
import {setMaxLineMb} from '../../../src/core/stream/bytelines.js'

const src = (text: string | Buffer, name = 'stdin'): Source => ({name, stream: Readable.from([Buffer.from(text)])})

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const x of it) out.push(x)
  return out
}

const header: Header = {
  span: 'header',
  kind: 'tokens',
  vocab: null,
  cased: true,
  special: {pad: 0, unk: 1, cls: 2, sep: 3, mask: 4},
  history: [{stage: 'tokenize', version: '0', flags: {}}],
}

describe('readLines', () => {
  it('numbers lines from 1 and drops CR of CRLF', async () => {
    const lines = await collect(readLines(src('a\r\nb\n\nc')))
    expect(lines).toEqual([
      {text: 'a', no: 1},
      {text: 'b', no: 2},
      {text: '', no: 3},
      {text: 'c', no: 4},
    ])
  })

  it('rejects binary input at the line where it appears', async () => {
    await expect(collect(readLines(src('ok\nbad\u0000bytes\n', 'data.bin')))).rejects.toThrow('data.bin:2: binary input')
  })

  it('frames lines split across chunks', async () => {
    const stream = Readable.from([Buffer.from('he'), Buffer.from('llo\nwor'), Buffer.from('ld\n')])
    expect((await collect(readLines({name: 'x', stream}))).map((l) => l.text)).toEqual(['hello', 'world'])
  })

  it('refuses a line longer than one string can hold, at its line, before gathering it', async () => {
    const chunk = Buffer.alloc(64 * 2 ** 20, 'a') // the same 64 MB chunk, 9 times: 576 MB of one line, 64 MB of memory
    const stream = Readable.from([Buffer.from('short\n'), ...Array.from({length: 9}, () => chunk)])
    await expect(collect(readLines({name: 'big.txt', stream}, 'detect')))
      .rejects.toThrow('big.txt:2: a line longer than 512 MB, more than one string holds; break it into lines (span tokenize and span vocab read a line of any length)')
  })
})

describe('readNdjson', () => {
  it('skips blank lines and keeps line numbers', async () => {
    const recs = await collect(readNdjson(src('{"a":1}\n\n{"a":2}\n')))
    expect(recs).toEqual([
      {value: {a: 1}, line: 1},
      {value: {a: 2}, line: 3},
    ])
  })

  it('names source and line for invalid JSON and for non-objects', async () => {
    await expect(collect(readNdjson(src('{"a":1}\n{"a":\n', 'f.ndjson')))).rejects.toThrow(/^f\.ndjson:2: invalid JSON/)
    await expect(collect(readNdjson(src('[1,2]\n')))).rejects.toThrow('stdin:1: expected a JSON object')
  })
})

describe('--max-line-mb', () => {
  it('a record line longer than the limit is an error at its line, before it is gathered whole', async () => {
    setMaxLineMb(1)
    try {
      const big = `{"a":1}\n{"x":"${'y'.repeat(1.5 * 2 ** 20)}"}\n`
      const chunks = Readable.from(Array.from({length: Math.ceil(big.length / 65536)}, (_, i) => Buffer.from(big.slice(i * 65536, (i + 1) * 65536))))
      await expect(collect(readNdjson({name: 'big.ndjson', stream: chunks}))).rejects.toThrow(/^big\.ndjson:2: a line longer than 1 MB \(--max-line-mb\)/)
      expect(await collect(readNdjson(src(`{"x":"${'y'.repeat(2 ** 20 - 100)}"}\n`)))).toHaveLength(1)
    } finally {
      setMaxLineMb(64)
    }
  })
})

describe('openStage', () => {
  it('reads the header and checks the producing stage', async () => {
    const text = `${JSON.stringify(header)}\n{"doc":0,"ids":[5]}\n`
    const stage = await openStage(src(text), ['tokens'])
    expect(stage.header?.kind).toBe('tokens')
    expect((await collect(stage.records)).map((r) => r.value)).toEqual([{doc: 0, ids: [5]}])
  })

  it('explains a stream from the wrong stage', async () => {
    const text = `${JSON.stringify(header)}\n`
    await expect(openStage(src(text), ['blocks'])).rejects.toThrow(
      'stdin:1: expected a stream of blocks (from span block), got tokens (from span tokenize)',
    )
  })

  it('accepts hand-written streams without a header, and empty input', async () => {
    const stage = await openStage(src('{"ids":[1]}\n'), ['blocks'])
    expect(stage.header).toBeNull()
    expect(await collect(stage.records)).toHaveLength(1)
    const empty = await openStage(src(''), ['blocks'])
    expect(empty.header).toBeNull()
    expect(await collect(empty.records)).toHaveLength(0)
  })

  it('rejects a malformed header with its line', async () => {
    await expect(openStage(src('{"span":"header","kind":"nonsense","history":[]}\n'), ['tokens'])).rejects.toThrow(
      'stdin:1: bad header record: unknown kind "nonsense"',
    )
  })
})

describe('nextHeader', () => {
  it('passes everything on and appends the stage to the history', () => {
    const next = nextHeader(header, 'blocks', {stage: 'block', version: '0', flags: {len: 8}})
    expect(next.kind).toBe('blocks')
    expect(next.special).toEqual(header.special)
    expect(next.history.map((h) => h.stage)).toEqual(['tokenize', 'block'])
    expect(header.history).toHaveLength(1) // not mutated
  })
})

describe('LineWriter', () => {
  it('writes lines in order, waiting for a slow reader (backpressure)', async () => {
    const got: string[] = []
    let writes = 0
    const slow = new Writable({
      highWaterMark: 1024,
      write(chunk, _enc, cb) {
        writes++
        got.push(chunk.toString())
        setTimeout(cb, 1)
      },
    })
    const w = new LineWriter(slow)
    for (let i = 0; i < 20_000; i++) await w.record({i})
    await w.end()
    const lines = got.join('').split('\n')
    expect(lines).toHaveLength(20_001)
    expect(JSON.parse(lines[19_999])).toEqual({i: 19_999})
    expect(writes).toBeLessThan(100) // chunked, not a write per line
  })

  it('turns a closed pipe into PipeClosed', async () => {
    const out = new PassThrough()
    const w = new LineWriter(out)
    out.destroy(Object.assign(new Error('write EPIPE'), {code: 'EPIPE'}))
    await new Promise((r) => setImmediate(r))
    await expect(w.raw('x\n')).rejects.toBeInstanceOf(PipeClosed)
  })

  it('a write error other than EPIPE (a full disk) is that error, never PipeClosed; with onFail it is reported once and output dropped', async () => {
    const enospc = () => Object.assign(new Error('ENOSPC: no space left on device, write'), {code: 'ENOSPC'})
    const out = new PassThrough()
    const w = new LineWriter(out)
    out.destroy(enospc())
    await new Promise((r) => setImmediate(r))
    await expect(w.raw('x\n')).rejects.toMatchObject({code: 'ENOSPC'})
    await expect(w.end()).rejects.toMatchObject({code: 'ENOSPC'}) // destroyed since: still the cause, not a closed pipe
    const failures: Error[] = []
    const out2 = new PassThrough()
    const w2 = new LineWriter(out2, (e) => failures.push(e))
    out2.destroy(enospc())
    await new Promise((r) => setImmediate(r))
    await w2.record({a: 1})
    await w2.flush()
    await w2.end()
    expect(failures.map((e) => (e as {code?: string}).code)).toEqual(['ENOSPC'])
  })

  it('SpanError carries an exit code', () => {
    expect(new SpanError('x').exitCode).toBe(1)
    expect(new SpanError('x', 3).exitCode).toBe(3)
  })
})
