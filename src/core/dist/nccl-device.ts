import * as tf from '@tensorflow/tfjs'
import {CudaBackend} from '../engine/cuda/backend.js'
import {loadDistAddon} from './addon.js'
import {type Collective, anyRank} from './collective.js'
import {CollectiveError} from './errors.js'
import {BUCKET_BYTES, buckets} from './grads.js'
import {ncclLibrary, ncclUniqueId, ncclVersion, probeNccl} from './nccl.js'

/** What native/cuda/src/nccl.cc adds to the cuda addon: one communicator, collectives on the backend's stream. */
interface NcclRuntime {
  ncclOpen(path: string, id: Uint8Array, nranks: number, rank: number): number
  ncclAllReduce(send: number, recv: number, count: number, average?: boolean): void
  ncclBroadcast(send: number, recv: number, count: number, root: number): void
  ncclGroup(start: boolean): void
  ncclClose(): void
}

/** The cuda backend when it is the current one, else null. */
export function currentCudaBackend(): CudaBackend | null {
  if (tf.getBackend() !== 'cuda') return null
  const b = tf.backend()
  return b instanceof CudaBackend ? b : null
}

/**
 * NCCL on the cuda backend's device (docs/cuda-nccl.md): the communicator made from the unique
 * id rank 0 broadcasts over the host collective (MPI), and collectives on device tensors,
 * enqueued on the backend's one stream in order with its kernels. Every rank opens it at the
 * same point (a collective); a failure any rank meets stops every rank with one line.
 */
export class DeviceComm {
  private constructor(
    private readonly b: CudaBackend,
    private readonly rt: NcclRuntime,
    readonly version: string,
  ) {}

  static open(coll: Collective, b: CudaBackend, env: NodeJS.ProcessEnv = process.env): DeviceComm {
    const rt = b.dev.rt as unknown as Partial<NcclRuntime>
    const probe = probeNccl(env)
    let why = probe.available ? null : `--backend cuda on ${coll.size} processes needs NCCL: ${probe.detail.split(';')[0]}`
    if (!why && typeof rt.ncclOpen !== 'function') why = 'the cuda loader has no NCCL bindings (out of date: run `node native/build.mjs`)'
    agree(coll, why, 'load NCCL')
    const {addon} = loadDistAddon()
    const id = ncclUniqueId(coll, () => (addon as NonNullable<typeof addon>).ncclUniqueId(), env)
    let version = 0
    try {
      version = (rt as NcclRuntime).ncclOpen(ncclLibrary(env), id, coll.size, coll.rank)
    } catch (err) {
      const msg = (err as Error).message.split('\n')[0]
      const hint = msg.includes('Duplicate GPU') ? "; each rank needs its own device (leave --device out: a rank takes its local rank's)" : ''
      why = `NCCL could not make its communicator (device ${b.ordinal}): ${msg}${hint}`
    }
    agree(coll, why, 'make the NCCL communicator')
    return new DeviceComm(b, rt as NcclRuntime, ncclVersion(version))
  }

  /** The device address of a tensor's buffer. */
  ptr(t: tf.Tensor): number {
    return this.b.ptr(t)
  }

  /** A new float32 tensor of `n` elements on the device, its values unset (a collective's output). */
  empty(n: number): tf.Tensor1D {
    return tf.engine().makeTensorFromTensorInfo(this.b.makeOutput([n], 'float32')) as tf.Tensor1D
  }

  /** `body`'s collectives issued together at its end (ncclGroupStart/End). */
  group<T>(body: () => T): T {
    this.rt.ncclGroup(true)
    try {
      return body()
    } finally {
      this.rt.ncclGroup(false)
    }
  }

  allReduceSum(send: tf.Tensor, recv: tf.Tensor): void {
    this.rt.ncclAllReduce(this.ptr(send), this.ptr(recv), send.size)
  }

  broadcast(send: tf.Tensor, recv: tf.Tensor, root = 0): void {
    this.rt.ncclBroadcast(this.ptr(send), this.ptr(recv), send.size, root)
  }

  close(): void {
    this.rt.ncclClose()
  }
}

/** Every rank stops with one line (rank 0's) when any rank met `why`. */
function agree(coll: Collective, why: string | null, what: string): void {
  if (anyRank(coll, why !== null)) throw new CollectiveError(why ?? `another rank could not ${what}; see its line`)
}

/**
 * Sums every rank's gradients on the device, as allReduceGrads (grads.ts) does on the host: the
 * same parameter order, buckets of ~25 MB, a parameter some ranks lack counted as zeros there.
 * Each bucket is packed into one buffer ([S], concatenated on the device), all-reduced
 * out-of-place into another, and cut back into the parameters' shapes; the all-reduces of a
 * step are one NCCL group, and nothing waits on the host. Returns the host seconds spent.
 */
export function allReduceGradsOnDevice(dev: DeviceComm, coll: Collective, params: [string, tf.Variable][], grads: Map<string, tf.Tensor>, bytes = BUCKET_BYTES): number {
  const t0 = performance.now()
  const present = Float64Array.from(params, ([n]) => (grads.has(n) ? 1 : 0)) // [P]
  coll.allReduceSum([present])
  const shapes = new Map(params.map(([n, v]) => [n, v.shape]))
  const names = params.map(([n]) => n).filter((_, i) => present[i] > 0)
  const size = (n: string) => (shapes.get(n) as number[]).reduce((a, b) => a * b, 1)
  const groups = buckets(names, size, bytes)
  const packed = groups.map((g) => tf.tidy(() => tf.concat(g.map((n) => (grads.get(n) ?? tf.zeros(shapes.get(n) as number[])).reshape([-1]))))) // [S] each
  const summed = packed.map((p) => dev.empty(p.size)) // [S] each
  dev.group(() => packed.forEach((p, i) => dev.allReduceSum(p, summed[i])))
  groups.forEach((g, i) => {
    const parts = tf.split(summed[i], g.map(size))
    g.forEach((n, j) => {
      grads.get(n)?.dispose()
      grads.set(n, parts[j].reshape(shapes.get(n) as number[]))
    })
    tf.dispose(parts)
  })
  tf.dispose([...packed, ...summed]) // after the group was issued: the allocator reuses their blocks in stream order
  return (performance.now() - t0) / 1000
}

/** Rank 0's values of every variable on every rank, broadcast on the device (out-of-place, then assigned). */
export function broadcastVariablesOnDevice(dev: DeviceComm, vars: [string, tf.Variable][]): void {
  const outs = vars.map(([, v]) => dev.empty(v.size)) // [size] each
  dev.group(() => vars.forEach(([, v], i) => dev.broadcast(v, outs[i], 0)))
  vars.forEach(([, v], i) => tf.tidy(() => v.assign(outs[i].reshape(v.shape))))
  tf.dispose(outs)
}
