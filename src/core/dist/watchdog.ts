import {Worker} from 'node:worker_threads'
import {SpanError} from '../stream/errors.js'

/** PyTorch's default process-group timeout (torch.distributed.init_process_group: 30 minutes). */
export const DEFAULT_COLLECTIVE_TIMEOUT_S = 1800

/** SPAN_COLLECTIVE_TIMEOUT in seconds (0: never), else the default. */
export function collectiveTimeout(env: NodeJS.ProcessEnv = process.env): number {
  const s = env.SPAN_COLLECTIVE_TIMEOUT
  if (s === undefined || s.trim() === '') return DEFAULT_COLLECTIVE_TIMEOUT_S
  const x = Number(s)
  if (!Number.isFinite(x) || x < 0) throw new SpanError(`SPAN_COLLECTIVE_TIMEOUT=${s}: expected seconds ≥ 0 (0: wait for ever)`)
  return x
}

// The watcher thread: the main thread is blocked inside MPI while a collective waits, so the
// clock must run elsewhere. It only reads the shared slots and, past the limit, says so on fd 2
// and SIGKILLs its process: the launcher then ends the job (README "Training on many processes").
const WATCHER = `
Promise.all([import('node:worker_threads'), import('node:fs')]).then(([{workerData: w}, {writeSync}]) => {
  const slots = new Int32Array(w.shared)
  setInterval(() => {
    const began = Atomics.load(slots, 0)
    if (began === 0) return
    const waited = Date.now() - w.t0 - (began - 1) * 100
    if (waited < w.limitMs) return
    const what = w.names[Atomics.load(slots, 1)]
    writeSync(2, w.prefix + 'waited ' + Math.round(waited / 1000) + ' s in ' + what + ' for the other ranks (one is hung, stopped or far behind); ending the job (SPAN_COLLECTIVE_TIMEOUT=' + w.limitMs / 1000 + ')\\n')
    process.kill(process.pid, 'SIGKILL')
  }, w.everyMs)
})
`

/** The collectives a rank can block in, by the index the watcher reads. */
const NAMES = ['all-reduce', 'broadcast', 'MPI_Finalize'] as const
export type Blocking = (typeof NAMES)[number]

/**
 * Ends a rank that has waited longer than the limit in one collective. Open MPI has no timeout
 * of its own: one rank stopped (SIGSTOP, a debugger), deadlocked or stuck on a file system
 * would hold every other rank, and the job, for ever.
 */
export class Watchdog {
  private readonly slots: Int32Array // [0] tenths of a second after t0 the collective began, + 1 (0: none; years fit); [1] which
  private readonly t0 = Date.now()
  private readonly worker: Worker

  constructor(limitS: number, prefix: string) {
    this.slots = new Int32Array(new SharedArrayBuffer(8))
    const limitMs = limitS * 1000
    const workerData = {shared: this.slots.buffer, t0: this.t0, limitMs, prefix, names: NAMES, everyMs: Math.max(50, Math.min(1000, limitMs / 10))}
    this.worker = new Worker(WATCHER, {eval: true, workerData})
    this.worker.unref() // never keeps the process alive
    this.worker.on('error', (err) => process.stderr.write(`${prefix}has no collective watchdog (${err.message}); the run goes on without it\n`))
  }

  /** Runs one blocking collective under the clock. */
  timed<T>(what: Blocking, body: () => T): T {
    Atomics.store(this.slots, 1, NAMES.indexOf(what))
    Atomics.store(this.slots, 0, Math.floor((Date.now() - this.t0) / 100) + 1)
    try {
      return body()
    } finally {
      Atomics.store(this.slots, 0, 0)
    }
  }

  stop(): void {
    void this.worker.terminate()
  }
}
