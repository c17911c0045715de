import {loadMpi, mpiLibrary} from './mpi.js'
import {probeNccl} from './nccl.js'

/** One line of `span doctor` per collectives engine: what it is, or why it cannot be used. */
export interface EngineReport {
  engine: 'mpi' | 'nccl'
  available: boolean
  detail: string
}

/** Loads (never initialises) each engine's library; never throws. */
export function probeDistEngines(env: NodeJS.ProcessEnv = process.env): EngineReport[] {
  const m = loadMpi(env)
  const mpi: EngineReport = m.addon
    ? {engine: 'mpi', available: true, detail: `Open MPI (${mpiLibrary(env)}, dlopen); launch with mpirun -np N, or srun --mpi=pmix -n N under Slurm`}
    : {engine: 'mpi', available: false, detail: m.error as string}
  return [mpi, {engine: 'nccl', ...probeNccl(env)}]
}

/** `span doctor`'s text line of an engine: `collectives mpi  ok  …` or `… missing  why`. */
export function engineLine(r: EngineReport): string {
  return `collectives ${r.engine.padEnd(4)}  ${r.available ? 'ok     ' : 'missing'}  ${r.detail}\n`
}
