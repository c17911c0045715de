import type {LineWriter} from '../stream/writer.js'

const DEFAULT_MB = 16 // about 80 000 records of pretrain's: hours of a reader's pause at --log-every 1

/**
 * The metrics writer of a training loop, which never blocks the loop on its reader: records
 * are queued in memory and written as stdout drains; past SPAN_METRICS_QUEUE_MB (16) of them
 * unwritten, the loop waits for the reader (said once on stderr) until a stop signal, which ends
 * the wait. Nothing is dropped. docs/formats.md#stdout-and-signals.
 */
export function patientMetrics(w: LineWriter, log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): LineWriter {
  const mb = metricsQueueMb(env)
  return w.patient(Math.max(1, Math.round(mb * 2 ** 20)), () =>
    log(
      `stdout is not read: ${mb} MiB of metrics records wait to be written; training waits for the reader (SIGINT, SIGTERM or SIGUSR2 still stop it after its step, with a checkpoint)`,
    ),
  )
}

/** SPAN_METRICS_QUEUE_MB when a positive number, else 16. */
export function metricsQueueMb(env: NodeJS.ProcessEnv): number {
  const given = env.SPAN_METRICS_QUEUE_MB
  const x = given === undefined || given.trim() === '' ? DEFAULT_MB : Number(given)
  return Number.isFinite(x) && x > 0 ? x : DEFAULT_MB
}
