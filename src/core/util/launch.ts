/**
 * Rank and world from the launcher's environment (docs: README "Training on many processes").
 * Open MPI's mpirun, Slurm's srun and torchrun each export their own variables; with none of
 * them the run is one process.
 */
export type Launcher = 'openmpi' | 'slurm' | 'torchrun' | 'none'

export interface LaunchEnv {
  launcher: Launcher
  rank: number
  size: number
  localRank: number
  /** torchrun's rendezvous (MASTER_ADDR:MASTER_PORT), else null */
  master: string | null
}

export const SINGLE: LaunchEnv = {launcher: 'none', rank: 0, size: 1, localRank: 0, master: null}

/** The variables each launcher sets: [rank, size, local rank]. */
const SOURCES: [Launcher, string, string, string][] = [
  ['openmpi', 'OMPI_COMM_WORLD_RANK', 'OMPI_COMM_WORLD_SIZE', 'OMPI_COMM_WORLD_LOCAL_RANK'],
  ['slurm', 'SLURM_PROCID', 'SLURM_NTASKS', 'SLURM_LOCALID'],
  ['torchrun', 'RANK', 'WORLD_SIZE', 'LOCAL_RANK'],
]

function int(env: NodeJS.ProcessEnv, key: string, min: number): number | null {
  const s = env[key]
  if (s === undefined || s.trim() === '') return null
  const x = Number(s)
  if (!Number.isInteger(x) || x < min) throw new RangeError(`${key}=${s}: expected an integer ≥ ${min}`)
  return x
}

/** The first launcher whose rank and size are both set; one process when none is. */
export function launchEnv(env: NodeJS.ProcessEnv = process.env): LaunchEnv {
  for (const [launcher, r, s, l] of SOURCES) {
    const rank = int(env, r, 0)
    const size = int(env, s, 1)
    if (rank === null || size === null) continue
    if (rank >= size) throw new RangeError(`${r}=${rank} is not below ${s}=${size}`)
    const master = launcher === 'torchrun' && env.MASTER_ADDR ? `${env.MASTER_ADDR}:${env.MASTER_PORT ?? '29500'}` : null
    return {launcher, rank, size, localRank: int(env, l, 0) ?? 0, master}
  }
  return SINGLE
}

/** The GPU a rank uses: --device when given, else its local rank. */
export function deviceOf(env: LaunchEnv, device: number | null): number {
  return device ?? env.localRank
}

/** This process's rank as the launcher tells it (0 alone, or when the variables are malformed: opening the collective reports those). */
export function launchRank(env: NodeJS.ProcessEnv = process.env): number {
  try {
    return launchEnv(env).rank
  } catch {
    return 0
  }
}
