import type * as tf from '@tensorflow/tfjs'
import {type CudaDevice, type CudaGemm, type CudaKernel, registerCudaKernel} from './kernel-table.js'
import {flashBackward, flashForward, flashTakes} from './kernels-flash-attention.js'
import {rowBlock} from './kernels-fused.js'
import {sizeOf} from './launch-util.js'

/**
 * SpanAttention(Grad) on the cuda backend, simple form (issue 20), as native/src/fused.cc
 * attention_forward / attention_backward: per batch entry, the head products are cuBLASLt GEMMs
 * batched over the A heads (each head a d-column slice of [T, H], so strides of d), the masked
 * softmax and its backward are attention_softmax.cu, and the probabilities' dropout is dropout.cu
 * with native's (seed, flat index into probs) mask. probs [B, A, T, T] is materialised and saved.
 * Where the fused kernels take the sizes (kernels-flash-attention.ts: head width ≤ 128), they run
 * instead and the second output is the row log-sum-exp [B, A, T]; SpanAttentionGrad tells the two
 * apart by that output's rank (3: lse, with ctx and mask among its inputs; 4: probs).
 */
type Dims = {B: number; T: number; H: number; A: number; d: number; scale: number; keep: number; seed: number}

function dims(q: tf.TensorInfo, attrs: Record<string, unknown> | undefined): Dims {
  const [B, T, H] = q.shape
  const A = Number(attrs?.heads)
  const d = H / A
  return {B, T, H, A, d, scale: 1 / Math.sqrt(d), keep: 1 - Number(attrs?.rate ?? 0), seed: Number(attrs?.seed ?? 0)}
}

const grid = (n: number): [number, number, number] => [Math.max(1, Math.min(n, 65535)), 1, 1]

/** One head-batched product for batch entry b: operands are [T, H] head slices ('h') or [T, T] probability blocks ('p'). */
function headGemm(dev: CudaDevice, D: Dims, b: number, g: Omit<CudaGemm, 'batch' | 'M'> & {kinds: string}): void {
  const [ka, kb, kc] = [...g.kinds]
  const ld = (k: string) => (k === 'h' ? D.H : D.T)
  const stride = (k: string) => (k === 'h' ? D.d : D.T * D.T)
  const off = (k: string) => (k === 'h' ? b * D.T * D.H : b * D.A * D.T * D.T)
  const {kinds: _kinds, ...rest} = g
  dev.gemm({
    ...rest,
    M: D.T,
    batch: D.A,
    lda: ld(ka),
    ldb: ld(kb),
    ldc: ld(kc),
    strideA: stride(ka),
    strideB: stride(kb),
    strideC: stride(kc),
    offsetA: off(ka),
    offsetB: off(kb),
    offsetC: off(kc),
  })
}

/** dropout(P) into a new [B, A, T, T] tensor, or P itself when nothing is dropped. */
function dropped(dev: CudaDevice, D: Dims, P: tf.TensorInfo): tf.TensorInfo {
  if (D.keep >= 1) return P
  const n = sizeOf(P.shape)
  const out = dev.makeOutput(P.shape, 'float32')
  dev.launch(
    'dropout',
    'span_dropout_f32',
    [Math.max(1, Math.min(Math.ceil(n / 256), 4096)), 1, 1],
    [256, 1, 1],
    [{ptr: P}, {ptr: out}, {i64: n}, {f32: D.keep}, {seed: D.seed}],
  )
  return out
}

/** SpanAttention: [ctx [B, T, H], probs [B, A, T, T]]. */
const attention: CudaKernel = ({inputs: {q, k, v, mask}, attrs, backend}) => {
  if (![q, k, v, mask].every((t) => t?.dtype === 'float32' && sizeOf(t.shape) > 0)) return null
  const D = dims(q!, attrs)
  if (flashTakes(D)) return flashForward(backend, D, q!, k!, v!, mask!)
  const probs = backend.makeOutput([D.B, D.A, D.T, D.T], 'float32')
  for (let b = 0; b < D.B; b++) headGemm(backend, D, b, {a: q!, b: k!, c: probs, N: D.T, K: D.d, transA: false, transB: true, kinds: 'hhp'}) // Q_h·K_hᵀ
  const rows = D.B * D.A * D.T
  backend.launch('attention_softmax', 'span_attention_softmax_f32', grid(rows), rowBlock(D.T), [
    {ptr: probs},
    {ptr: mask!},
    {ptr: probs},
    {i64: D.B},
    {i32: D.A},
    {i32: D.T},
    {f32: D.scale},
  ])
  const Pd = dropped(backend, D, probs)
  const ctx = backend.makeOutput([D.B, D.T, D.H], 'float32')
  for (let b = 0; b < D.B; b++) headGemm(backend, D, b, {a: Pd, b: v!, c: ctx, N: D.d, K: D.T, transA: false, transB: false, kinds: 'phh'}) // dropout(P)·V_h
  if (Pd !== probs) backend.free(Pd)
  return [ctx, probs]
}

/** SpanAttentionGrad: [dq, dk, dv] from dy, q, k, v and the saved probs (or lse, ctx and mask); the dropout mask redrawn from the seed. */
const attentionGrad: CudaKernel = ({inputs: {dy, q, k, v, probs, ctx, mask}, attrs, backend}) => {
  if (![dy, q, k, v, probs].every((t) => t?.dtype === 'float32' && sizeOf(t.shape) > 0)) return null
  const D = dims(q!, attrs)
  if (probs!.shape.length === 3) return ctx && mask ? flashBackward(backend, D, {dy: dy!, q: q!, k: k!, v: v!, ctx, mask, lse: probs!}) : null
  const [dq, dk, dv] = [0, 1, 2].map(() => backend.makeOutput([D.B, D.T, D.H], 'float32'))
  const Pd = dropped(backend, D, probs!)
  const dP = backend.makeOutput(probs!.shape, 'float32')
  for (let b = 0; b < D.B; b++) {
    headGemm(backend, D, b, {a: Pd, b: dy!, c: dv, N: D.d, K: D.T, transA: true, transB: false, kinds: 'phh'}) // dV = Pdᵀ·dctx
    headGemm(backend, D, b, {a: dy!, b: v!, c: dP, N: D.T, K: D.d, transA: false, transB: true, kinds: 'hhp'}) // dPd = dctx·Vᵀ
  }
  if (Pd !== probs) backend.free(Pd)
  const n = sizeOf(dP.shape)
  if (D.keep < 1)
    backend.launch(
      'dropout',
      'span_dropout_f32',
      [Math.max(1, Math.min(Math.ceil(n / 256), 4096)), 1, 1],
      [256, 1, 1],
      [{ptr: dP}, {ptr: dP}, {i64: n}, {f32: D.keep}, {seed: D.seed}],
    )
  const rows = D.B * D.A * D.T
  backend.launch('attention_softmax', 'span_attention_softmax_backward_f32', grid(rows), rowBlock(D.T), [
    {ptr: probs!},
    {ptr: dP},
    {ptr: dP},
    {i64: rows},
    {i32: D.T},
    {f32: D.scale},
  ])
  for (let b = 0; b < D.B; b++) {
    headGemm(backend, D, b, {a: dP, b: k!, c: dq, N: D.d, K: D.T, transA: false, transB: false, kinds: 'phh'}) // dQ = dS·K
    headGemm(backend, D, b, {a: dP, b: q!, c: dk, N: D.d, K: D.T, transA: true, transB: false, kinds: 'phh'}) // dK = dSᵀ·Q
  }
  backend.free(dP)
  return [dq, dk, dv]
}

/** Registers SpanAttention and SpanAttentionGrad as cuda kernels. */
export function registerAttention(): void {
  registerCudaKernel('SpanAttention', attention)
  registerCudaKernel('SpanAttentionGrad', attentionGrad)
}
