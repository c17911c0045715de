/**
 * SIGINT/SIGTERM noted instead of dying, once, so a training loop (pretrain's and the fine-tuning
 * loop) ends after the current step with a checkpoint; a second SIGINT has the default effect.
 * Under mpirun every rank gets the signal (Open MPI forwards it as SIGTERM); the loops agree on
 * it after each step (DataParallel.agreeStop), so every rank stops after the same one.
 */
export function watchSignals(): {caught: string | null; dispose(): void} {
  const w = {
    caught: null as string | null,
    dispose: () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    },
  }
  function onSignal(name: string): void {
    w.caught = name
    w.dispose()
  }
  process.once('SIGINT', onSignal)
  process.once('SIGTERM', onSignal)
  return w
}
