import {SpanError} from '../stream/errors.js'
import {type DistAddon, loadDistAddon} from './addon.js'
import type {Collective, HostFloats} from './collective.js'
import {type Blocking, Watchdog, collectiveTimeout} from './watchdog.js'

/** Open MPI's library: SPAN_MPI_LIB overrides (a path, or a name dlopen searches for). */
export function mpiLibrary(env: NodeJS.ProcessEnv = process.env): string {
  return env.SPAN_MPI_LIB || 'libmpi.so.40'
}

/** The addon with libmpi loaded, or the one-line reason it cannot be. */
export function loadMpi(env: NodeJS.ProcessEnv = process.env): {addon: DistAddon | null; error: string | null} {
  const {addon, error} = loadDistAddon()
  if (!addon) return {addon: null, error}
  const why = addon.loadMpi(mpiLibrary(env))
  if (!why) return {addon, error: null}
  return {addon: null, error: `${why.startsWith(mpiLibrary(env)) ? '' : `${mpiLibrary(env)}: `}${why} (Debian: apt-get install openmpi-bin libopenmpi-dev)`}
}

/**
 * MPI for host buffers: Open MPI's MPI_Allreduce(MPI_IN_PLACE, …, MPI_SUM, MPI_COMM_WORLD) and
 * MPI_Bcast. Errors are fatal to the job (MPI_ERRORS_ARE_FATAL): a rank that dies takes the
 * job down through the launcher, it never hangs the others; one that hangs is caught by the
 * others' Watchdog (SPAN_COLLECTIVE_TIMEOUT).
 */
export class MpiCollective implements Collective {
  readonly engine = 'mpi'
  readonly rank: number
  readonly size: number
  readonly version: string
  private closed = false
  private readonly watchdog: Watchdog | null

  /** `label` names the command in the watchdog's line (`span pretrain`). */
  private constructor(private readonly addon: DistAddon, label: string, limitS: number) {
    const [rank, size, version] = addon.init()
    this.rank = rank
    this.size = size
    this.version = version
    this.watchdog = size > 1 && limitS > 0 ? new Watchdog(limitS, `${rank > 0 ? `[rank ${rank}] ` : ''}${label}: rank ${rank} `) : null
  }

  static open(env: NodeJS.ProcessEnv = process.env, label = 'span'): MpiCollective {
    const limitS = collectiveTimeout(env)
    const {addon, error} = loadMpi(env)
    if (!addon) throw new SpanError(`launched as several processes, but MPI cannot be used: ${error}`)
    return new MpiCollective(addon, label, limitS)
  }

  allReduceSum(bufs: HostFloats[]): void {
    this.timed('all-reduce', () => {
      for (const b of bufs) if (b.length > 0) this.addon.allReduceSum(b)
    })
  }

  broadcast(bufs: ArrayBufferView[], root = 0): void {
    this.timed('broadcast', () => {
      for (const b of bufs) if (b.byteLength > 0) this.addon.broadcast(b, root)
    })
  }

  /** MPI_Finalize: every rank reaches it at the end of a run. */
  close(): void {
    if (this.closed) return
    this.closed = true
    this.timed('MPI_Finalize', () => this.addon.finalize())
    this.watchdog?.stop()
  }

  private timed(what: Blocking, body: () => void): void {
    if (this.watchdog) this.watchdog.timed(what, body)
    else body()
  }

  /** MPI_Abort: ends every rank of the job now (the launcher names this rank). */
  abort(code: number): never {
    this.addon.abort(code)
    process.exit(code)
  }
}
