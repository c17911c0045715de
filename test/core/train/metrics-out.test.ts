// patientMetrics (src/core/train/metrics-out.ts): the bound of a training loop's unwritten metrics.
import {Writable} from 'node:stream'
import {expect, it} from 'vitest'
import {LineWriter} from '../../../src/core/stream/writer.js'
import {metricsQueueMb, patientMetrics} from '../../../src/core/train/metrics-out.js'

/** A stream that never takes a byte. */
const stuck = () => new Writable({highWaterMark: 16, write() {}})

/** Records written until one waits for the reader: the bytes queued then, and what was said. */
async function untilHeld(env: NodeJS.ProcessEnv): Promise<{queued: number; said: string[]}> {
  const said: string[] = []
  const out = stuck()
  const w = patientMetrics(new LineWriter(out), (l) => said.push(l), env)
  for (let i = 0; i < 100_000; i++) {
    let done = false
    void w
      .record({step: i, pad: 'x'.repeat(200)})
      .then(() => w.flush())
      .then(() => (done = true))
    await new Promise((r) => setImmediate(r))
    if (!done) break
  }
  w.stopWaiting()
  return {queued: out.writableLength, said}
}

it('waits past SPAN_METRICS_QUEUE_MB of unwritten records, saying so once', async () => {
  const {queued, said} = await untilHeld({SPAN_METRICS_QUEUE_MB: '0.05'})
  expect(queued).toBeGreaterThan(0.05 * 2 ** 20)
  expect(queued).toBeLessThan(0.05 * 2 ** 20 + 1000)
  expect(said).toEqual([
    'stdout is not read: 0.05 MiB of metrics records wait to be written; training waits for the reader (SIGINT, SIGTERM or SIGUSR2 still stop it after its step, with a checkpoint)',
  ])
})

it('16 MiB by default, and for a value that is not a positive number', () => {
  for (const v of [undefined, '', ' ', 'lots', '-1', '0', 'Infinity'])
    expect(metricsQueueMb(v === undefined ? {} : {SPAN_METRICS_QUEUE_MB: v}), String(v)).toBe(16)
  expect(metricsQueueMb({SPAN_METRICS_QUEUE_MB: '64'})).toBe(64)
})
