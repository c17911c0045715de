import * as tf from '@tensorflow/tfjs'
import type {CudaBackend} from './backend.js'
import type {LossScaler} from './loss-scale.js'

/**
 * The training step's optimiser on the cuda backend (native/cuda/kernels/adamw_multi.cu, issue 21
 * item 4): the squared global gradient norm and the clipping factor in one launch, every
 * parameter's AdamW update in one launch, through a table of the tensors' device addresses
 * (and the step's bias corrections) uploaded once per step. Nothing is read back: the factor stays on the device, and the squared
 * norm is returned as a device scalar the caller reads when it logs it. The updates are in place
 * (p, m and v keep their storage; a variable that shares its storage gets its own copy first).
 */
export interface MultiTensor {
  p: tf.Variable
  m: tf.Variable
  v: tf.Variable
  /** the gradient (read only) */
  g: tf.Tensor
  /** the step's learning rate times this parameter's factor (multiplied in double on the host) */
  lr: number
  /** the decoupled weight decay, 0 for the parameters exempt from it */
  wd: number
}

export interface MultiHyper {
  beta1: number
  beta2: number
  eps: number
  /** 1 − β1ᵗ and 1 − β2ᵗ */
  bc1: number
  bc2: number
}

const ENTRY = 56 // bytes of SpanTensorEntry: p, m, v, g (u64), n, chunk0 (i64), lr, wd (f32)
const CHUNK = 16384 // elements per chunk: a block's unit of work
const BLOCK: [number, number, number] = [256, 1, 1]
const MAX_GRID = 320 // ≤ 1024 (the norm kernel's last block adds one partial per block)

/** True when the current backend is cuda: optim.ts then takes this path. */
export const onCuda = (): boolean => tf.getBackend() === 'cuda'

/** Gives x storage of its own (refcount 1) so an in-place update changes nothing else. */
function ownStorage(backend: CudaBackend, x: tf.Variable): void {
  if (backend.refCount(x.dataId) === 1) return
  const copy = tf.tidy(() => x.mul(1)) // the same bits, new storage
  x.assign(copy)
  copy.dispose()
}

/**
 * The table of the non-empty tensors (adamw_multi.cu's SpanTensorEntry) followed by the step's bias
 * corrections bc1, bc2 (f32: the kernel reads them from the device, so its arguments are the same
 * every step and a CUDA Graph replays the launch), and its chunk count.
 */
function table(backend: CudaBackend, ts: MultiTensor[], h: MultiHyper): {bytes: Int32Array; chunks: number} {
  const buf = new ArrayBuffer(ENTRY * ts.length + 8)
  const d = new DataView(buf)
  let chunks = 0
  ts.forEach((t, i) => {
    const at = i * ENTRY
    ;[t.p, t.m, t.v, t.g].forEach((x, j) => d.setBigUint64(at + 8 * j, BigInt(backend.ptr(x)), true))
    d.setBigInt64(at + 32, BigInt(t.g.size), true)
    d.setBigInt64(at + 40, BigInt(chunks), true)
    d.setFloat32(at + 48, t.lr, true)
    d.setFloat32(at + 52, t.wd, true)
    chunks += Math.ceil(t.g.size / CHUNK)
  })
  d.setFloat32(ENTRY * ts.length, h.bc1, true)
  d.setFloat32(ENTRY * ts.length + 4, h.bc2, true)
  return {bytes: new Int32Array(buf), chunks}
}

/**
 * Clips the gradients to a global norm of maxNorm (Infinity: off) and applies one AdamW update
 * to every tensor, in two launches; returns Σ g² (float32) as a device scalar (the caller disposes it).
 * With a loss scaler (--precision fp16), loss_scale.cu runs between the two (a third launch): the
 * gradients are the scaled loss's, the factor unscales them before clipping or (an overflow) skips the
 * update, the bias corrections come from the scaler's count of applied updates, and Σ g² is returned unscaled.
 */
export function clipAndAdamW(ts: MultiTensor[], h: MultiHyper, maxNorm: number, scaler?: LossScaler | null): tf.Scalar {
  const backend = tf.backend() as CudaBackend
  for (const t of ts) {
    if (t.g.dtype !== 'float32' || t.g.size !== t.p.size) throw new Error('multi-tensor AdamW: a float32 gradient of the parameter size expected')
    for (const x of [t.p, t.m, t.v]) ownStorage(backend, x)
  }
  const live = ts.filter((t) => t.g.size > 0)
  const sumsq = backend.zeros([], 'float32')
  if (live.length > 0) {
    const {bytes, chunks} = table(backend, live, h)
    const grid = Math.min(chunks, MAX_GRID)
    const tab = backend.makeOutput([bytes.length], 'int32')
    backend.dev.rt.upload(backend.ptr(tab), bytes)
    const scratch = backend.zeros([2 * grid + 2], 'int32') // partials (grid doubles), the ticket, the factor
    const at = backend.ptr(scratch)
    const [ticket, factor] = [at + 8 * grid, at + 8 * grid + 4]
    const head = [{ptr: tab}, {i32: live.length}, {i64: CHUNK}, {i64: chunks}]
    backend.launch('adamw_multi', 'span_multi_sum_squares_clip_f32', [grid, 1, 1], BLOCK, [
      ...head,
      {ptr: at},
      {ptr: ticket},
      {f32: maxNorm},
      {ptr: sumsq},
      {ptr: factor},
    ])
    const bc = backend.ptr(tab) + ENTRY * live.length // [bc1, bc2], uploaded with the table (the scaler's replace them)
    scaler?.launch(backend, {sumsq: backend.ptr(sumsq), factor, bc}, maxNorm)
    const hyper = [h.beta1, h.beta2, h.eps].map((f) => ({f32: f}))
    backend.launch('adamw_multi', 'span_adamw_multi_f32', [grid, 1, 1], BLOCK, [...head, ...hyper, {ptr: bc}, {ptr: factor}])
    backend.free(tab) // stream-ordered allocator: reused only by work queued after these launches
    backend.free(scratch)
  }
  return tf.engine().makeTensorFromTensorInfo(sumsq, backend) as tf.Scalar
}
