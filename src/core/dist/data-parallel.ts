import type * as tf from '@tensorflow/tfjs'
import {type Collective, checkAgreement} from './collective.js'
import {CollectiveError} from './errors.js'
import {allReduceGrads, broadcastVariables} from './grads.js'
import {launchEnv} from '../util/launch.js'
import {MpiCollective} from './mpi.js'
import {DeviceComm, allReduceGradsOnDevice, broadcastVariablesOnDevice, currentCudaBackend} from './nccl-device.js'
import {openCollective} from './open.js'
import {type RankLog, prefixStderr} from './rank-log.js'
import {errorLine} from '../util/fs-errors.js'
import {releaseAllLocks} from '../util/lock.js'

/** Target counts of one global micro-batch, the denominators of its loss (summed over ranks). */
export interface GlobalCounts {
  mlm: number
  sbo: number
  rows: number // examples (the NSP mean's denominator)
}

/** Sums, counts and tokens of a step's tally (objective.ts Tally), in the order they travel. */
export interface TallyLike {
  sums: {mlm: number[]; sbo: number[]; nsp: number[]}
  loss: number
  tokens: number
}

export {CollectiveError}

/** How long a failed rank other than 0 waits before it speaks and ends the job: an error rank 0 met as well is told once, by rank 0. */
const RANK_QUIET_MS = 3000

/** The signals that stop a training loop, in the order that names the stop when ranks caught different ones. */
const STOP_NAMES = ['SIGINT', 'SIGTERM', 'SIGUSR2']

/**
 * What the training loop needs to run as one of N data-parallel ranks (docs: README "Training
 * on many processes"): its share of each global micro-batch, the global loss denominators,
 * summed gradients and metrics, one agreed stop, and rank 0 alone writing. With one process
 * every method is the identity and the loop runs as before.
 */
export class DataParallel {
  allReduceSeconds = 0
  /** NCCL on the cuda backend's device once the backend runs (several ranks on cuda), else null: host buffers over MPI. */
  private device: DeviceComm | null = null

  private constructor(readonly coll: Collective, private readonly log: RankLog, private readonly label = 'span') {}

  /** Prefixes stderr first (so every later line is tagged), then starts the engine; `label` is the command (`span pretrain`). */
  static open(label: string, env: NodeJS.ProcessEnv = process.env): DataParallel {
    let rank = 0
    try {
      rank = launchEnv(env).rank
    } catch {
      // openCollective reports the bad variable
    }
    const log = prefixStderr(rank)
    return new DataParallel(openCollective(env, label).coll, log, label) // a failed start ends the process, its error line still prefixed `[rank k]`
  }

  get rank(): number {
    return this.coll.rank
  }

  get size(): number {
    return this.coll.size
  }

  /** Rank 0 writes metrics, checkpoints and progress. */
  get writes(): boolean {
    return this.coll.rank === 0
  }

  /** This rank's rows [start, end) of a global micro-batch of size × perRank examples. */
  share(perRank: number): [number, number] {
    return [this.rank * perRank, (this.rank + 1) * perRank]
  }

  /** The global micro-batch's target counts from this rank's. */
  counts(mine: GlobalCounts): GlobalCounts {
    const b = Float64Array.from([mine.mlm, mine.sbo, mine.rows])
    this.coll.allReduceSum([b])
    return {mlm: b[0], sbo: b[1], rows: b[2]}
  }

  /** Every rank's gradients summed (buckets of ~25 MB). */
  reduceGrads(params: [string, tf.Variable][], grads: Map<string, tf.Tensor>): void {
    const dev = this.onDevice()
    this.allReduceSeconds += dev ? allReduceGradsOnDevice(dev, this.coll, params, grads) : allReduceGrads(this.coll, params, grads)
  }

  /**
   * The NCCL communicator when several ranks train on the cuda backend, opened the first time
   * a collective on parameters comes (every rank at the same point: after the backend started).
   */
  private onDevice(): DeviceComm | null {
    if (this.device || this.size === 1) return this.device
    const b = currentCudaBackend()
    if (!b) return null
    this.device = DeviceComm.open(this.coll, b)
    if (this.writes) process.stderr.write(`${this.label}: gradients all-reduced on the devices by NCCL ${this.device.version} (${this.size} ranks, one device each)\n`)
    return this.device
  }

  /** The step's metrics over every rank (sums of sums; losses are already globally normalised). */
  reduceTally(t: TallyLike): void {
    if (this.size === 1) return
    const keys = ['mlm', 'sbo', 'nsp'] as const
    const b = Float64Array.from([...keys.flatMap((k) => t.sums[k]), t.loss, t.tokens])
    this.coll.allReduceSum([b])
    keys.forEach((k, j) => {
      for (let i = 0; i < 3; i++) t.sums[k][i] = b[3 * j + i]
    })
    t.loss = b[9]
    t.tokens = b[10]
  }

  /** A number summed over ranks (a loss already weighted by each rank's share). */
  sum(x: number): number {
    if (this.size === 1) return x
    const b = Float64Array.from([x])
    this.coll.allReduceSum([b])
    return b[0]
  }

  /**
   * A signal caught by any rank stops every rank after the same step, and every rank names the
   * same one (the first of STOP_NAMES caught anywhere). A rank waiting here runs no signal
   * handler, so it often agrees before it has seen its own copy; it must not guess the name
   * (rank 0 ended 143, SIGTERM's status, on mpirun's SIGUSR2). Another reason (the finetune
   * loop's 'patience') comes back as `caught`, or 'stop' on a rank that had none.
   */
  agreeStop(caught: string | null): string | null {
    if (this.size === 1) return caught
    const b = new Float64Array(STOP_NAMES.length + 1) // one slot per signal, the last for any other reason
    if (caught !== null) b[STOP_NAMES.includes(caught) ? STOP_NAMES.indexOf(caught) : STOP_NAMES.length] = 1
    this.coll.allReduceSum([b])
    const first = b.findIndex((n) => n > 0)
    return first < 0 ? null : first < STOP_NAMES.length ? STOP_NAMES[first] : (caught ?? 'stop')
  }

  /** Same resolved config and data on every rank, else every rank stops with one message. */
  checkSame(label: string, what: unknown): void {
    try {
      checkAgreement(this.coll, label, what)
    } catch (err) {
      throw new CollectiveError((err as Error).message)
    }
  }

  /** Rank 0's parameters on every rank. */
  broadcast(vars: [string, tf.Variable][]): void {
    const dev = this.onDevice()
    if (dev) broadcastVariablesOnDevice(dev, vars)
    else broadcastVariables(this.coll, vars)
  }

  /** A checkpoint of another world size cannot continue exactly: refused. */
  checkResumeWorld(saved: number | undefined, dir: string): void {
    const world = saved ?? 1
    if (world !== this.size) {
      throw new CollectiveError(`${dir}: the run was trained on ${world} process${world === 1 ? '' : 'es'}, this one has ${this.size}; resume with the same number (mpirun -np ${world}) to continue it exactly`)
    }
  }

  /** ncclCommDestroy, before MPI_Finalize (a failure to is not the run's: it is said, not thrown). */
  private closeDevice(): void {
    try {
      this.device?.close()
    } catch (err) {
      process.stderr.write(`${this.label}: ${(err as Error).message.split('\n')[0]}\n`)
    }
    this.device = null
  }

  /**
   * Ends the engine. After an error only this rank met, the rank says so in one line and
   * aborts the job (MPI_Abort), so no other rank waits on it; an error every rank met ends
   * cleanly, rank 0 alone telling it.
   */
  finish(err: unknown, say: (line: string) => void): void {
    if (this.size > 1 && err !== undefined && !(err instanceof CollectiveError) && this.coll instanceof MpiCollective) {
      if (this.rank > 0) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RANK_QUIET_MS) // rank 0 met it too (the same file, the same flags)? it says so and ends the job first
      say(`rank ${this.rank} failed: ${errorLine(err).message}; ending the job`)
      releaseAllLocks() // MPI_Abort runs no exit handler: a run directory's lock would outlive the job
      this.coll.abort(1)
    }
    if (err instanceof CollectiveError && this.rank > 0) this.log.mute()
    this.closeDevice()
    this.coll.close()
  }
}
