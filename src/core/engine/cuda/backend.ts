import * as tf from '@tensorflow/tfjs'
import {launchEnv} from '../../util/launch.js'
import {type CudaDevice0, openDevice} from './device.js'
import {type AllocatorStats} from './device.js'
import {type Precision, PRECISIONS, defaultPrecision} from './bf16.js'
import {ltGemm} from './gemm-layout.js'
import type {CudaArg, CudaDevice, CudaGemm, Dim3} from './kernel-table.js'

/**
 * The `cuda` tfjs KernelBackend: tensors live on the device (one caching-allocator block each,
 * bool stored as int32 0/1), shared between tensors by refcount (Reshape, Identity and
 * ExpandDims alias their input: kernels-shape.ts), read back asynchronously (`read` polls an
 * event and never blocks the event loop) or synchronously (`readSync`, for dataSync). Kernels
 * run on one stream in issue order; nothing here synchronises except reads.
 */
interface Stored {
  ptr: number
  bytes: number
  dtype: tf.DataType
  refCount: number
}

export interface CudaOptions {
  device: number
  /** null: by the device's compute capability (bf16.ts defaultPrecision) */
  precision: Precision | null
}

const BYTES = 4 // float32, int32 and bool (as int32) alike

const hostArray = (dtype: tf.DataType, n: number): Float32Array | Int32Array => (dtype === 'float32' ? new Float32Array(n) : new Int32Array(n))

/** tfjs' values → the device's 4-byte elements. */
function deviceValues(values: tf.backend_util.BackendValues | number[], dtype: tf.DataType): Float32Array | Int32Array {
  if (dtype === 'string' || dtype === 'complex64') throw new Error(`the cuda backend does not store ${dtype} tensors`)
  if (dtype === 'float32') return values instanceof Float32Array ? values : Float32Array.from(values as ArrayLike<number>)
  return values instanceof Int32Array ? values : Int32Array.from(values as ArrayLike<number>)
}

/** The device's elements → what tfjs expects of dtype (Uint8Array for bool). */
const tfValues = (h: Float32Array | Int32Array, dtype: tf.DataType): tf.backend_util.TypedArray => (dtype === 'bool' ? Uint8Array.from(h) : h)

export class CudaBackend extends tf.KernelBackend implements CudaDevice {
  private store = new WeakMap<tf.DataId, Stored>()
  private count = 0

  constructor(
    readonly dev: CudaDevice0,
    opts: CudaOptions,
  ) {
    super()
    this.ordinal = opts.device
  }

  readonly ordinal: number

  /**
   * fp32, TF32 tensor-core products (cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32), or bf16 or fp16 operands with
   * fp32 accumulation and result (fp16: with dynamic loss scaling, src/core/train/loss-scale.ts): setCudaOptions, else by compute capability; read at each GEMM.
   */
  get precision(): Precision {
    return options.precision ?? defaultPrecision(this.dev.arch)
  }

  private get(id: tf.DataId): Stored {
    const s = this.store.get(id)
    if (!s) throw new Error('cuda backend: a tensor that is not on the device (disposed?)')
    return s
  }

  private alloc(dtype: tf.DataType, n: number): tf.DataId {
    const bytes = n * BYTES
    const id = {}
    this.store.set(id, {ptr: this.dev.rt.alloc(bytes), bytes, dtype, refCount: 1})
    this.count++
    return id
  }

  override write(values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType): tf.DataId {
    const h = deviceValues(values, dtype)
    const id = this.alloc(dtype, h.length)
    this.dev.rt.upload(this.get(id).ptr, h)
    return id
  }

  override move(dataId: tf.DataId, values: tf.backend_util.BackendValues, shape: number[], dtype: tf.DataType, refCount: number): void {
    const h = deviceValues(values, dtype)
    const ptr = this.dev.rt.alloc(h.length * BYTES)
    this.dev.rt.upload(ptr, h)
    this.store.set(dataId, {ptr, bytes: h.length * BYTES, dtype, refCount})
    this.count++
  }

  override readSync(dataId: tf.DataId): tf.backend_util.BackendValues {
    const s = this.get(dataId)
    const h = hostArray(s.dtype, s.bytes / BYTES)
    this.dev.rt.downloadSync(s.ptr, h)
    return tfValues(h, s.dtype)
  }

  /** D2H into pinned memory behind an event, polled with setImmediate: the event loop keeps running. */
  override async read(dataId: tf.DataId): Promise<tf.backend_util.BackendValues> {
    const s = this.get(dataId)
    const h = hostArray(s.dtype, s.bytes / BYTES)
    const id = this.dev.rt.readStart(s.ptr, s.bytes)
    while (!this.dev.rt.readPoll(id, h)) await new Promise((r) => setImmediate(r))
    return tfValues(h, s.dtype)
  }

  override refCount(dataId: tf.DataId): number {
    return this.store.get(dataId)?.refCount ?? 0
  }

  override incRef(dataId: tf.DataId): void {
    this.get(dataId).refCount++
  }

  override disposeData(dataId: tf.DataId, force = false): boolean {
    const s = this.store.get(dataId)
    if (!s) return true
    s.refCount--
    if (!force && s.refCount > 0) return false
    this.dev.rt.free(s.ptr)
    this.store.delete(dataId)
    this.count--
    return true
  }

  override numDataIds(): number {
    return this.count
  }

  override memory(): {unreliable: boolean; numBytesInGPU: number; reasons?: string[]} & AllocatorStats {
    const a = this.dev.rt.stats()
    return {unreliable: false, numBytesInGPU: a.liveBytes, ...a}
  }

  /** The caching allocator's peak bytes since the last call (then reset to what is live now): one step's peak. */
  takePeakBytes(): number {
    const peak = this.dev.rt.stats().peakBytes
    this.dev.rt.resetPeak()
    return peak
  }

  override timerAvailable(): boolean {
    return true
  }

  /** Wall time of f including the device work it issued (the stream is synchronised). */
  override async time(f: () => void): Promise<tf.TimingInfo> {
    const t0 = performance.now()
    f()
    this.dev.rt.sync()
    return {kernelMs: performance.now() - t0} as tf.TimingInfo
  }

  override floatPrecision(): 32 {
    return 32
  }

  override epsilon(): number {
    return 1e-7
  }

  override dispose(): void {
    this.dev.rt.sync()
  }

  // ---- CudaDevice: what kernels use ----

  ptr(t: tf.TensorInfo): number {
    return this.get(t.dataId).ptr
  }

  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo {
    return {
      dataId: this.alloc(
        dtype,
        shape.reduce((a, b) => a * b, 1),
      ),
      shape,
      dtype,
    }
  }

  zeros(shape: number[], dtype: tf.DataType): tf.TensorInfo {
    const t = this.makeOutput(shape, dtype)
    this.dev.rt.memsetD32(this.ptr(t), 0, this.get(t.dataId).bytes / BYTES)
    return t
  }

  fill(shape: number[], dtype: tf.DataType, value: number): tf.TensorInfo {
    const t = this.makeOutput(shape, dtype)
    const bits = dtype === 'float32' ? new Uint32Array(new Float32Array([value]).buffer)[0] : value >>> 0
    this.dev.rt.memsetD32(this.ptr(t), bits, this.get(t.dataId).bytes / BYTES)
    return t
  }

  free(t: tf.TensorInfo): void {
    this.disposeData(t.dataId)
  }

  launch(file: string, fn: string, grid: Dim3, block: Dim3, args: CudaArg[], sharedBytes = 0, defines?: Record<string, string | number>): void {
    const f = this.dev.fn(file, fn, defines)
    const seeds: number[] = []
    const resolved = args.map((a) => ('seed' in a ? {ptr: this.seedBlock(a.seed, seeds)} : a))
    this.dev.launch(f, grid, block, resolved, (a) => this.argValue(a), sharedBytes)
    for (const p of seeds) this.dev.rt.free(p) // stream order: reused only by work issued after the launch
  }

  /**
   * A block holding `seed` as a u64 (uploaded: under a graph, the step's data, not a captured
   * argument), recorded in `blocks` to be freed after the launch.
   */
  private seedBlock(seed: number, blocks: number[]): number {
    const p = this.dev.rt.alloc(8)
    blocks.push(p)
    this.dev.rt.upload(p, new BigUint64Array([BigInt.asUintN(64, BigInt(Math.trunc(seed)))]))
    return p
  }

  private argValue(a: CudaArg): number {
    if ('ptr' in a) return typeof a.ptr === 'number' ? a.ptr : this.ptr(a.ptr)
    return Object.values(a)[0] as number
  }

  gemm(g: CudaGemm): void {
    const view = (rows: number, cols: number, ld: number | undefined, stride: number | undefined) => ({rows, cols, ld: ld ?? cols, batchStride: stride ?? 0})
    const batch = g.batch ?? 1
    const a = g.transA ? view(g.K, g.M, g.lda, g.strideA) : view(g.M, g.K, g.lda, g.strideA)
    const b = g.transB ? view(g.N, g.K, g.ldb, g.strideB) : view(g.K, g.N, g.ldb, g.strideB)
    const lt = ltGemm(a, b, view(g.M, g.N, g.ldc, g.strideC ?? g.M * g.N), g.transA, g.transB, batch)
    const at = (p: tf.TensorInfo | number, off = 0) => (typeof p === 'number' ? p : this.ptr(p)) + off * BYTES
    const op = (ptr: number, l: typeof lt.A) => [ptr, l.rows, l.cols, l.ld, l.stride]
    const mode = PRECISION_CODE[this.precision]
    // bf16 (fp16): A and B read from bf16 (fp16) copies in the same layout (offsets folded in); C stays fp32
    const scratch: number[] = []
    const input = (p: tf.TensorInfo | number, off: number | undefined, v: ReturnType<typeof view>) =>
      mode >= 2 ? this.halfCopy(mode === 3, at(p, off), extent(v, batch), scratch) : at(p, off)
    // cuBLASLt's A is tfjs' b and its B is tfjs' a (gemm-layout.ts)
    this.dev.rt.gemm([
      ...[lt.transA, lt.transB].map(Number),
      mode,
      batch,
      g.alpha ?? 1,
      g.beta ?? 0,
      ...op(input(g.b, g.offsetB, b), lt.A),
      ...op(input(g.a, g.offsetA, a), lt.B),
      ...op(at(g.c, g.offsetC), lt.C),
      ...(g.epilogue ? [EPILOGUE_CODE[g.epilogue], at(g.bias!), g.aux === undefined ? 0 : at(g.aux), g.auxLd ?? 0] : []),
    ])
    for (const p of scratch) this.dev.rt.free(p) // stream order: reused only by work issued after the GEMM
  }

  /** A bf16 (cast_bf16.cu) or fp16 (cast_f16.cu) copy of n fp32 elements at src, in a block of its own recorded in `scratch` (src itself when n is 0). */
  private halfCopy(fp16: boolean, src: number, n: number, scratch: number[]): number {
    if (n === 0) return src
    const dst = this.dev.rt.alloc(2 * n)
    scratch.push(dst)
    const threads = 256 // at least 8 elements a thread (grid-stride), at most 1024 blocks: enough to keep a GPU's memory busy
    const blocks = Math.min(Math.ceil(n / 8 / threads), 1024)
    const [module, kernel] = fp16 ? ['cast_f16', 'span_f32_to_f16'] : ['cast_bf16', 'span_f32_to_bf16']
    this.launch(module, kernel, [blocks, 1, 1], [threads, 1, 1], [{ptr: src}, {ptr: dst}, {i64: n}])
    return dst
  }
}

/** cublasLt.h's cublasLtEpilogue_t values of the epilogues span uses (abi.h SPAN_CUBLASLT_EPILOGUE_*). */
const EPILOGUE_CODE: Record<NonNullable<CudaGemm['epilogue']>, number> = {bias: 4, gelu_aux_bias: 164}

/** The code of each precision for the addon's gemm (bindings.cc). */
const PRECISION_CODE: Record<Precision, number> = {fp32: 0, tf32: 1, bf16: 2, fp16: 3}

/** Elements an operand spans from its first: rows × cols with row stride ld, over `batch` matrices batchStride apart (0: one, broadcast). */
function extent(v: {rows: number; cols: number; ld: number; batchStride: number}, batch: number): number {
  if (v.rows === 0 || v.cols === 0 || batch === 0) return 0
  return (v.batchStride > 0 ? (batch - 1) * v.batchStride : 0) + (v.rows - 1) * v.ld + v.cols
}

/** Defaults from SPAN_CUDA_DEVICE and SPAN_CUDA_PRECISION (fp32, tf32, bf16 or fp16; anything else: by compute capability). */
function envOptions(): CudaOptions {
  const device = Number(process.env.SPAN_CUDA_DEVICE ?? 0)
  const p = process.env.SPAN_CUDA_PRECISION ?? ''
  return {device: Number.isInteger(device) && device >= 0 ? device : 0, precision: (PRECISIONS as readonly string[]).includes(p) ? (p as Precision) : null}
}

let options: CudaOptions = {...envOptions(), ...localRankDevice()}

/** `--device N` (before the backend starts: one context per process) and `--precision` (any time). */
export function setCudaOptions(o: Partial<CudaOptions>): void {
  options = {...options, ...o}
}

export const cudaOptions = (): CudaOptions => options

/** The backend on the configured device, or why it cannot start (one line). */
export function createCudaBackend(): CudaBackend | string {
  const dev = openDevice(options.device)
  return typeof dev === 'string' ? dev : new CudaBackend(dev, options)
}

/**
 * Without SPAN_CUDA_DEVICE, a rank started by mpirun or srun takes its local rank's device (one
 * device per rank of a node, as NCCL needs: docs/cuda-nccl.md); --device still overrides it.
 * Malformed launcher variables are left to the collective to report.
 */
function localRankDevice(): Partial<CudaOptions> {
  if (process.env.SPAN_CUDA_DEVICE !== undefined) return {}
  try {
    return {device: launchEnv().localRank}
  } catch {
    return {}
  }
}
