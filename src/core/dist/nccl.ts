import {join} from 'node:path'
import {type SearchEnv, realSearchEnv, sitePackages} from '../engine/cuda/libs.js'
import {loadDistAddon} from './addon.js'
import type {Collective} from './collective.js'

const SONAME = 'libnccl.so.2'

/**
 * NCCL's library: SPAN_NCCL_LIB (a path or a name), else the first folder holding libnccl.so.2
 * of SPAN_CUDA_LIBS (where the tests' stand-in lives: docs/cuda-standins.md) and of NVIDIA's
 * wheel under a site-packages (nvidia/nccl/lib: pip's nvidia-nccl-cu12, which PyTorch installs;
 * libs.ts sitePackages), else the system loader's libnccl.so.2 (LD_LIBRARY_PATH, ld.so.cache).
 */
export function ncclLibrary(env: NodeJS.ProcessEnv = process.env, search: SearchEnv = {...realSearchEnv(), env}): string {
  if (env.SPAN_NCCL_LIB) return env.SPAN_NCCL_LIB
  const own = (env.SPAN_CUDA_LIBS ?? '').split(':').filter((d) => d.length > 0)
  const wheels = sitePackages(search).map((sp) => join(sp, 'nvidia', 'nccl', 'lib'))
  const dir = [...own, ...wheels].find((d) => search.fs.list(d).includes(SONAME))
  return dir ? join(dir, SONAME) : SONAME
}

/** What NCCL is for here, on either line of span doctor (README "Training on many processes"). */
const USE = 'data-parallel training on --backend cuda all-reduces gradients on the device with it (MPI starts the ranks)'
const NEED = 'data-parallel training on --backend cuda needs it (pip install nvidia-nccl-cu12, or set SPAN_NCCL_LIB)'

/** NCCL's version when libnccl.so.2 loads, else the one-line reason it does not. */
export function probeNccl(env: NodeJS.ProcessEnv = process.env): {available: boolean; detail: string} {
  const {addon, error} = loadDistAddon()
  if (!addon) return {available: false, detail: error as string}
  const r = addon.loadNccl(ncclLibrary(env))
  if (r.startsWith('version ')) return {available: true, detail: `NCCL ${ncclVersion(Number(r.slice(8)))} (${ncclLibrary(env)}); ${USE}`}
  return {available: false, detail: `${r.startsWith(ncclLibrary(env)) ? r : `${ncclLibrary(env)}: ${r}`}; ${NEED}`}
}

/** NCCL_VERSION_CODE as text: 22703 → 2.27.3 (nccl.h: X·10000 + Y·100 + Z from 2.9 on, X·1000 + Y·100 + Z before). */
export function ncclVersion(code: number): string {
  if (code >= 20900) return `${Math.floor(code / 10000)}.${Math.floor((code % 10000) / 100)}.${code % 100}`
  return `${Math.floor(code / 1000)}.${Math.floor((code % 1000) / 100)}.${code % 100}`
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
