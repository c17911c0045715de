import type * as tf from '@tensorflow/tfjs'

/**
 * Registration API of the `cuda` backend's kernels (backend.ts), for the census' plain kernels
 * (kernels-*.ts) and span's fused ones alike. A leaf module: it imports nothing of the backend.
 *
 *   registerCudaKernel('SpanLayerNorm', ({inputs, attrs, backend}) => {
 *     const x = inputs.x!                                       // [N, H] float32, on the device
 *     const y = backend.makeOutput(x.shape, 'float32')          // uninitialised device tensor
 *     backend.launch('layernorm', 'span_layernorm_f32', [rows, 1, 1], [256, 1, 1],
 *       [{ptr: x}, {ptr: y}, {i64: rows}, {f32: eps}], sharedBytes)
 *     return [y, mean, rstd]                                    // or null: run the composite
 *   })
 *
 * - `launch(file, fn, grid, block, args, shared?, defines?)` compiles native/cuda/kernels/FILE.cu
 *   with NVRTC (once per process per source, defines and arch) and launches `extern "C"` kernel fn
 *   on the backend's stream, asynchronously. Arguments are typed: {ptr: TensorInfo | device address},
 *   {i32}, {u32}, {i64}, {f32}. Nothing is read back to the host.
 * - `makeOutput(shape, dtype)` allocates (caching allocator), `zeros(shape, dtype)` also clears;
 *   `ptr(t)` is a tensor's device address; `free(t)` releases an intermediate made with makeOutput
 *   that is not returned. bool is stored as int32 (0/1) on the device; float32 and int32 as is.
 * - `gemm({...})` is one cuBLASLt matmul (see CudaGemm), fp32, TF32, bf16 or fp16 operands (fp32 result) per `--precision`.
 * A fused kernel's function may return null to decline: the composite formula then runs. Register
 * before the first kernel call (at import time of the module that defines them); the backend's
 * own tfjs registration (`registerCudaBackend`) picks up every entry, and fused kernels are looked
 * up at call time, so a later registration still takes effect for them.
 */
/**
 * A kernel argument. `seed`: a dropout seed the kernel reads through a pointer (`const unsigned long
 * long*`): the backend uploads it into a block of its own for the launch, so a captured graph reads
 * each step's seed as data instead of keeping the capture-time value (docs/cuda-backend.md).
 */
export type CudaArg = {ptr: tf.TensorInfo | number} | {i32: number} | {u32: number} | {i64: number} | {f32: number} | {seed: number}

export type Dim3 = [number, number, number]

/** D = alpha·op(A)·op(B) + beta·C in tfjs' row-major terms: c [M, N] = op(a)·op(b), batched by strides (elements; 0 broadcasts). */
export interface CudaGemm {
  a: tf.TensorInfo | number
  b: tf.TensorInfo | number
  c: tf.TensorInfo | number
  M: number
  N: number
  K: number
  transA: boolean
  transB: boolean
  batch?: number
  strideA?: number
  strideB?: number
  strideC?: number
  /** row strides of a, b, c as stored (default: their row lengths) */
  lda?: number
  ldb?: number
  ldc?: number
  /** element offsets into a, b, c */
  offsetA?: number
  offsetB?: number
  offsetC?: number
  alpha?: number
  /** 0 (default) never reads c */
  beta?: number
  /**
   * cuBLASLt's epilogue (gemm.cc): 'bias' adds `bias` (fp32, length N: one value a column of the
   * row-major c, the rows of cuBLASLt's column-major D) to every row of c after alpha and beta
   * (CUBLASLT_EPILOGUE_BIAS); 'gelu_aux_bias' also applies cuBLASLt's tanh GELU and writes its
   * input to `aux` (CUBLASLT_EPILOGUE_GELU_AUX_BIAS; opt-in only, kernels-fused.ts). Default: none.
   */
  epilogue?: 'bias' | 'gelu_aux_bias'
  bias?: tf.TensorInfo | number
  /** GELU_AUX_BIAS: where the pre-activation (z = GEMM + bias) goes, [M, N] row-major with row stride auxLd (a multiple of 8) */
  aux?: tf.TensorInfo | number
  auxLd?: number
}

/** The part of the cuda backend a kernel uses. */
export interface CudaDevice {
  readonly precision: 'fp32' | 'tf32' | 'bf16' | 'fp16'
  ptr(t: tf.TensorInfo): number
  makeOutput(shape: number[], dtype: tf.DataType): tf.TensorInfo
  zeros(shape: number[], dtype: tf.DataType): tf.TensorInfo
  /** a new tensor with every element `value` */
  fill(shape: number[], dtype: tf.DataType, value: number): tf.TensorInfo
  free(t: tf.TensorInfo): void
  launch(file: string, fn: string, grid: Dim3, block: Dim3, args: CudaArg[], sharedBytes?: number, defines?: Record<string, string | number>): void
  gemm(g: CudaGemm): void
}

export interface CudaKernelArgs {
  inputs: Record<string, tf.TensorInfo | undefined>
  attrs?: Record<string, unknown>
  backend: CudaDevice
}

export type CudaKernel = (args: CudaKernelArgs) => tf.TensorInfo | tf.TensorInfo[] | null

const table = new Map<string, CudaKernel>()

/** Adds (or replaces) the cuda implementation of tfjs kernel `name`. */
export function registerCudaKernel(name: string, impl: CudaKernel): void {
  table.set(name, impl)
}

/** The cuda implementation of `name`, if any. */
export const cudaKernelOf = (name: string): CudaKernel | undefined => table.get(name)

/** Every registered name. */
export const cudaKernelNames = (): string[] => [...table.keys()].sort()
