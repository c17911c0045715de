// The signals that stop a training loop with a checkpoint (src/core/train/signals.ts).
import {afterEach, expect, it} from 'vitest'
import {signalExitCode, stopAdvice, watchSignals} from '../../../src/core/train/signals.js'

let w: ReturnType<typeof watchSignals> | null = null
afterEach(() => w?.dispose())

it('notes the first of SIGINT, SIGTERM or SIGUSR2 and then lets the next have its default effect', () => {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGUSR2'] as const) {
    w = watchSignals()
    const before = process.listenerCount(s)
    process.emit(s, s) // as a delivered signal reaches the listeners
    expect(w.caught).toBe(s)
    expect(process.listenerCount('SIGINT') + process.listenerCount('SIGTERM') + process.listenerCount('SIGUSR2')).toBe(0) // all three released
    expect(before).toBe(1)
  }
})

it('exits 128 + the signal number, as a shell reports a signalled process', () => {
  expect([signalExitCode('SIGINT'), signalExitCode('SIGTERM'), signalExitCode('SIGUSR2')]).toEqual([130, 143, 140])
  expect(signalExitCode('SIGUSR2', 1)).toBe(0) // a rank > 0: rank 0's status is the job's
})

it("advises SIGUSR2 under Open MPI alone, with the launcher's kill delay", () => {
  expect(stopAdvice({})).toBeNull()
  expect(stopAdvice({SLURM_PROCID: '0', SLURM_NTASKS: '2'})).toBeNull()
  expect(stopAdvice({OMPI_COMM_WORLD_SIZE: '2'})).toBe(
    "to stop with a checkpoint: kill -USR2 <mpirun's pid> (Open MPI SIGKILLs the ranks 1 s after Ctrl-C's SIGTERM, odls_base_sigkill_timeout)",
  )
  expect(stopAdvice({OMPI_COMM_WORLD_SIZE: '2', OMPI_MCA_odls_base_sigkill_timeout: '30'})).toMatch(/ranks 30 s after/)
})
