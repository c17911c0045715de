import {loadDistAddon} from './addon.js'
import type {Collective} from './collective.js'

/** NCCL's library: SPAN_NCCL_LIB overrides. */
export function ncclLibrary(env: NodeJS.ProcessEnv = process.env): string {
  return env.SPAN_NCCL_LIB || 'libnccl.so.2'
}

/** What NCCL is for here, on either line of span doctor (README "Training on many processes"). */
const AWAITS_CUDA = 'the NCCL engine awaits the cuda backend (data-parallel training uses MPI until then)'

/** NCCL's version when libnccl.so.2 loads, else the one-line reason it does not. */
export function probeNccl(env: NodeJS.ProcessEnv = process.env): {available: boolean; detail: string} {
  const {addon, error} = loadDistAddon()
  if (!addon) return {available: false, detail: error as string}
  const r = addon.loadNccl(ncclLibrary(env))
  if (r.startsWith('version ')) return {available: true, detail: `NCCL ${r} (${ncclLibrary(env)}); ${AWAITS_CUDA}`}
  return {available: false, detail: `${r.startsWith(ncclLibrary(env)) ? r : `${ncclLibrary(env)}: ${r}`}; ${AWAITS_CUDA}`}
}

export const NCCL_UNIQUE_ID_BYTES = 128

/**
 * The communicator's unique id on every rank. With NCCL_COMM_ID (host:port) set, NCCL derives
 * the id from that address itself, so each rank asks for its own; otherwise rank 0 makes one
 * and broadcasts its 128 bytes over the host collective (MPI), as nccl-tests does
 * (NVIDIA/nccl-tests src/common.cu, ncclGetUniqueId then MPI_Bcast).
 */
export function ncclUniqueId(coll: Collective, getId: () => Uint8Array, env: NodeJS.ProcessEnv = process.env): Uint8Array {
  if (env.NCCL_COMM_ID) return getId()
  const id = coll.rank === 0 ? getId() : new Uint8Array(NCCL_UNIQUE_ID_BYTES)
  if (id.length !== NCCL_UNIQUE_ID_BYTES) throw new RangeError(`an NCCL unique id has ${NCCL_UNIQUE_ID_BYTES} bytes, got ${id.length}`)
  coll.broadcast([id], 0)
  return id
}
