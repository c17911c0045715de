import type * as tf from '@tensorflow/tfjs'
import type {CudaDevice, Dim3} from './kernel-table.js'

/**
 * SpanAttention(Grad) on the cuda backend, fused (issue 21 item 2): flash_attention_forward.cu
 * (online softmax over key tiles, padding mask and the probabilities' dropout in one kernel) and
 * flash_attention_backward.cu (dq, then dk and dv, recomputing P from the saved row log-sum-exp
 * and the dropout mask from native's (seed, index into [B, A, T, T]) bits). No [B, A, T, T]
 * tensor exists: SpanAttention's second output is lse [B, A, T] instead of probs, and the
 * gradient (fused-kernels.ts) hands it back with ctx. At --precision bf16 or fp16 with d a multiple of 16
 * (tf32: and d ≤ 64), flash_attention_wmma.cu does the same on tensor cores (nvcuda::wmma, bf16, fp16 or
 * tf32 operands, fp32 accumulation), same arguments. docs/cuda-fused-kernels.md, "Attention".
 */
export type FlashDims = {B: number; T: number; H: number; A: number; d: number; scale: number; keep: number; seed: number}

/** The widest head the kernels take (d floats of q and of the accumulators per thread). */
export const FLASH_MAX_D = 128

let enabled = process.env.SPAN_CUDA_FLASH_ATTENTION !== '0'

/** Test and bench hook: whether SpanAttention takes the fused kernels (else the simple GEMM + softmax path). */
export function setFlashAttention(on: boolean): boolean {
  const was = enabled
  enabled = on
  return was
}

/** Whether the fused kernels take these sizes: switched on, a whole head width of at most FLASH_MAX_D, grid limits. */
export const flashTakes = (D: FlashDims): boolean => enabled && Number.isInteger(D.d) && D.d >= 1 && D.d <= FLASH_MAX_D && D.A <= 65535 && D.B <= 65535

/** Compile-time sizes: threads per block = rows per block (forward: = keys per tile); shared memory ≤ 42 KiB (the .cu headers). */
function sizes(D: FlashDims): {defines: Record<string, number>; grid: Dim3; block: Dim3} {
  const N = D.d <= 64 ? 64 : 32
  return {defines: {SPAN_FA_D: D.d, SPAN_FA_N: N}, grid: [Math.ceil(D.T / N), D.A, D.B], block: [N, 1, 1]}
}

let tensorCores = process.env.SPAN_CUDA_TENSOR_CORE_ATTENTION !== '0'
/** Why flash_attention_wmma.cu did not compile here (no CUDA headers for NVRTC: cuda-include.ts), once per process; null while it does. */
let wmmaFailure: string | null = null

/** Test and bench hook: whether bf16, fp16 and tf32 runs take the tensor-core kernels (flash_attention_wmma.cu) where they can. */
export function setTensorCoreAttention(on: boolean): boolean {
  const was = tensorCores
  tensorCores = on
  return was
}

/**
 * Whether the tensor-core kernels take this run: --precision bf16 or fp16 (wmma m16n16k16) or tf32 (m16n16k8; fp32 staging, so
 * d ≤ 64 to fit 48 KiB of shared memory), d a multiple of 16, and they compiled.
 */
const wmmaTakes = (dev: CudaDevice, D: FlashDims): boolean =>
  tensorCores && wmmaFailure === null && D.d % 16 === 0 && (dev.precision === 'bf16' || dev.precision === 'fp16' || (dev.precision === 'tf32' && D.d <= 64))

/** The define that makes flash_attention_wmma.cu the module of a precision (none: bf16). */
const WMMA_VARIANT: Record<string, Record<string, number>> = {tf32: {SPAN_FA_TF32: 1}, fp16: {SPAN_FA_F16: 1}}

/** The tensor-core kernels' launch: a block of 2 warps for 32 rows, grid (⌈T/32⌉, A, B); the precision's define (WMMA_VARIANT) picks the module. */
const wmmaSizes = (dev: CudaDevice, D: FlashDims): {defines: Record<string, number>; grid: Dim3; block: Dim3} => ({
  defines: {SPAN_FA_D: D.d, ...WMMA_VARIANT[dev.precision]},
  grid: [Math.ceil(D.T / 32), D.A, D.B],
  block: [64, 1, 1],
})

/** Launches the tensor-core kernels (launch them all here); false, with the reason kept, when NVRTC cannot compile them (the FMA kernels run instead). */
function tryWmma(launch: () => void): boolean {
  try {
    launch()
    return true
  } catch (err) {
    wmmaFailure = (err as Error).message.split('\n')[0]
    return false
  }
}

/** Why the bf16 and tf32 attention runs on the FMA kernels in this process (null when it does not, or has not been tried). */
export const tensorCoreAttentionFailure = (): string | null => wmmaFailure

const tail = (D: FlashDims) => [{i32: D.T}, {i32: D.A}, {f32: D.scale}, {f32: D.keep}, {seed: D.seed}]

/** [ctx [B, T, H], lse [B, A, T]] from q, k, v [B, T, H] and the additive mask [B, T]. */
export function flashForward(dev: CudaDevice, D: FlashDims, q: tf.TensorInfo, k: tf.TensorInfo, v: tf.TensorInfo, mask: tf.TensorInfo): tf.TensorInfo[] {
  const ctx = dev.makeOutput([D.B, D.T, D.H], 'float32')
  const lse = dev.makeOutput([D.B, D.A, D.T], 'float32')
  const args = [{ptr: q}, {ptr: k}, {ptr: v}, {ptr: mask}, {ptr: ctx}, {ptr: lse}, ...tail(D)]
  const W = wmmaSizes(dev, D)
  if (wmmaTakes(dev, D) && tryWmma(() => dev.launch('flash_attention_wmma', 'span_flash_attention_forward_wmma', W.grid, W.block, args, 0, W.defines)))
    return [ctx, lse]
  const {defines, grid, block} = sizes(D)
  dev.launch('flash_attention_forward', 'span_flash_attention_forward_f32', grid, block, args, 0, defines)
  return [ctx, lse]
}

/** [dq, dk, dv] from dctx, q, k, v, the forward's ctx and lse, and the mask. */
export function flashBackward(dev: CudaDevice, D: FlashDims, t: Record<'dy' | 'q' | 'k' | 'v' | 'ctx' | 'mask' | 'lse', tf.TensorInfo>): tf.TensorInfo[] {
  const [dq, dk, dv] = [0, 1, 2].map(() => dev.makeOutput([D.B, D.T, D.H], 'float32'))
  const ins = [t.dy, t.q, t.k, t.v, t.ctx, t.mask, t.lse].map((ptr) => ({ptr}))
  const W = wmmaSizes(dev, D)
  const wmma = () => {
    dev.launch('flash_attention_wmma', 'span_flash_attention_backward_dq_wmma', W.grid, W.block, [...ins, {ptr: dq}, ...tail(D)], 0, W.defines)
    dev.launch('flash_attention_wmma', 'span_flash_attention_backward_dkdv_wmma', W.grid, W.block, [...ins, {ptr: dk}, {ptr: dv}, ...tail(D)], 0, W.defines)
  }
  if (wmmaTakes(dev, D) && tryWmma(wmma)) return [dq, dk, dv]
  const {defines, grid, block} = sizes(D)
  dev.launch('flash_attention_backward', 'span_flash_attention_backward_dq_f32', grid, block, [...ins, {ptr: dq}, ...tail(D)], 0, defines)
  dev.launch('flash_attention_backward', 'span_flash_attention_backward_dkdv_f32', grid, block, [...ins, {ptr: dk}, {ptr: dv}, ...tail(D)], 0, defines)
  return [dq, dk, dv]
}
