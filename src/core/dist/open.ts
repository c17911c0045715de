import {SpanError} from '../stream/errors.js'
import {type Collective, SingleProcess} from './collective.js'
import {type LaunchEnv, launchEnv} from '../util/launch.js'
import {MpiCollective} from './mpi.js'

/**
 * The collective of this process: one process when no launcher variable is set, MPI under
 * mpirun or srun --mpi=pmix (srun without PMI is refused: Debian's Open MPI meets its ranks through
 * PMIx only; README "Training on many processes"). torchrun's variables alone name a TCP rendezvous
 * span does not make (its NCCL communicator's unique id travels over MPI): such a launch is refused
 * with what to use instead.
 */
export function openCollective(env: NodeJS.ProcessEnv = process.env, label = 'span'): {coll: Collective; launch: LaunchEnv} {
  let launch: LaunchEnv
  try {
    launch = launchEnv(env)
  } catch (err) {
    throw new SpanError(`launcher environment: ${(err as Error).message}`)
  }
  if (launch.size === 1) return {coll: new SingleProcess(), launch}
  if (launch.launcher === 'torchrun') {
    throw new SpanError(`WORLD_SIZE=${launch.size} (torchrun-style launch): span's multi-process engine is MPI here, start the job with mpirun -np ${launch.size} or srun -n ${launch.size} (span does not rendezvous over ${launch.master ?? 'MASTER_ADDR'}: even on --backend cuda, NCCL's unique id travels over MPI)`)
  }
  if (launch.launcher === 'slurm' && !hasPmi(env)) {
    throw new SpanError(`srun started ${launch.size} tasks without a process-management interface (srun --mpi=none): Open MPI's ranks find each other through PMIx; run srun --mpi=pmix (or set MpiDefault=pmix in slurm.conf), or mpirun inside salloc or sbatch`)
  }
  const coll = MpiCollective.open(env, label)
  if (coll.rank !== launch.rank || coll.size !== launch.size) {
    coll.close()
    throw new SpanError(`MPI says rank ${coll.rank} of ${coll.size}, the ${launch.launcher} environment rank ${launch.rank} of ${launch.size}: a launcher mix-up (srun needs --mpi=pmix for Open MPI)`)
  }
  return {coll, launch}
}

/** Whether srun gave its tasks a PMI server to meet through: PMIx (--mpi=pmix) or PMI-2 (--mpi=pmi2). */
function hasPmi(env: NodeJS.ProcessEnv): boolean {
  return env.PMIX_RANK !== undefined || env.PMI_RANK !== undefined || env.PMI_FD !== undefined
}
