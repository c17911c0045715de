import {createHash} from 'node:crypto'
import {SpanError} from '../stream/errors.js'

/** Host buffers a collective sums. */
export type HostFloats = Float32Array | Float64Array

/**
 * The few collectives data-parallel training needs, on host buffers (docs: README "Training on
 * many processes"). Every rank calls the same methods in the same order with buffers of the
 * same lengths; an engine (MPI, or one process) carries them out.
 */
export interface Collective {
  readonly engine: string // 'single' | 'mpi'
  readonly rank: number
  readonly size: number
  /** Sums each buffer element-wise over the ranks, in place (every rank gets the sum). */
  allReduceSum(bufs: HostFloats[]): void
  /** Rank `root`'s bytes of each buffer, copied into every rank's (in place). */
  broadcast(bufs: ArrayBufferView[], root?: number): void
  /** Ends the engine (after the last collective; idempotent). */
  close(): void
}

/** One process: every collective is the identity. */
export class SingleProcess implements Collective {
  readonly engine = 'single'
  readonly rank = 0
  readonly size = 1
  allReduceSum(_bufs: HostFloats[]): void {}
  broadcast(_bufs: ArrayBufferView[], _root = 0): void {}
  close(): void {}
}

/**
 * Every rank must run the same thing: each hashes `what` (resolved config, data fingerprint),
 * rank 0's hash is broadcast, and the ranks that differ are summed into a list every rank
 * sees. On a mismatch every rank throws the same one-line error (rank 0's is the one shown).
 */
export function checkAgreement(coll: Collective, label: string, what: unknown): void {
  if (coll.size === 1) return
  const mine = createHash('sha256').update(JSON.stringify(what)).digest()
  const root = new Uint8Array(mine)
  coll.broadcast([root], 0)
  const differs = new Float64Array(coll.size)
  differs[coll.rank] = Buffer.compare(Buffer.from(root), mine) === 0 ? 0 : 1
  coll.allReduceSum([differs])
  const ranks = [...differs.keys()].filter((r) => differs[r] > 0)
  if (ranks.length === 0) return
  throw new SpanError(`rank${ranks.length > 1 ? 's' : ''} ${ranks.join(', ')} ha${ranks.length > 1 ? 've' : 's'} another ${label} than rank 0; every rank must run the same command on the same data`)
}

/** Any rank's flag set (a signal caught, an error met) is every rank's: a sum over ranks > 0. */
export function anyRank(coll: Collective, flag: boolean): boolean {
  if (coll.size === 1) return flag
  const b = new Float64Array([flag ? 1 : 0])
  coll.allReduceSum([b])
  return b[0] > 0
}
