import {constants} from 'node:os'

/**
 * The signals that end a training loop (pretrain's and the fine-tuning loop) after the current
 * step with a checkpoint instead of killing it, once; a second one has the default effect.
 * Under mpirun every rank gets the signal and the loops agree on it after each step
 * (DataParallel.agreeStop), so every rank stops after the same one. Open MPI forwards SIGUSR2 to
 * every rank at once; Ctrl-C (SIGINT) it turns into SIGTERM and then SIGKILL (stopAdvice).
 */
const STOPPING = ['SIGINT', 'SIGTERM', 'SIGUSR2'] as const

/**
 * `onCaught` runs in the handler, at once: the loop's metrics writer stops waiting for a reader
 * of stdout there (LineWriter.stopWaiting), so a loop held by an unread pipe reaches its step's end.
 */
export function watchSignals(onCaught?: (name: string) => void): {caught: string | null; dispose(): void} {
  const w = {
    caught: null as string | null,
    dispose: () => {
      for (const s of STOPPING) process.off(s, onSignal)
    },
  }
  function onSignal(name: string): void {
    w.caught = name
    w.dispose()
    onCaught?.(name)
  }
  for (const s of STOPPING) process.once(s, onSignal)
  return w
}

/**
 * The exit status of a run a signal stopped (checkpointed, not finished): 128 + its number (130,
 * 143, 140). A rank > 0 ends 0: mpirun aborts the job at the first non-zero exit, which killed
 * rank 0 between its checkpoint and the release of its lock; rank 0's status is the job's.
 */
export const signalExitCode = (name: string, rank = 0): number =>
  rank > 0 ? 0 : 128 + (constants.signals[name as NodeJS.Signals] ?? constants.signals.SIGTERM)

/**
 * Under Open MPI, how to stop a multi-process run with a checkpoint. On Ctrl-C mpirun sends the
 * ranks SIGCONT, SIGTERM odls_base_sigkill_timeout seconds later (1 by default) and SIGKILL as
 * long after that (measured with Open MPI 4.1), which a step and a save of any real model
 * outlast; SIGUSR2 it forwards to every rank at once and lets them end. Between Ctrl-C and its
 * SIGKILL mpirun also sleeps and reads none of the ranks' output: rank 0's stdout is a pty of
 * about 16 KB, which a record a step fills; its records then wait in memory, written off the main
 * thread (metrics-out.ts, base.ts unblockStdout), so the SIGTERM is still seen and the checkpoint
 * saved; the records still queued at the SIGKILL are lost.
 */
export function stopAdvice(env: NodeJS.ProcessEnv = process.env): string | null {
  if (env.OMPI_COMM_WORLD_SIZE === undefined) return null
  const t = env.OMPI_MCA_odls_base_sigkill_timeout ?? '1'
  return `to stop with a checkpoint: kill -USR2 <mpirun's pid> (Open MPI SIGKILLs the ranks ${t} s after Ctrl-C's SIGTERM, odls_base_sigkill_timeout)`
}
