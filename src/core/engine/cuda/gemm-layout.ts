/**
 * Layout and stride arithmetic of the cuda backend's matrix products, pure (no GPU): tfjs
 * tensors are row-major, cuBLASLt's matrices column-major (cublasLt.h, CUBLASLT_ORDER_COL). A
 * row-major matrix X [r, c] with row stride ld is, read column-major, Xᵀ [c, r] with leading
 * dimension ld; so C = op(A)·op(B) in row-major terms is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ,
 * i.e. cuBLASLt's first operand is tfjs' b, its second is tfjs' a, with m = N, n = M, and each
 * operand transposed exactly when tfjs asked for it.
 */

/** A batch of row-major matrices in one buffer: rows × cols, row stride ld (≥ cols), matrices batchStride apart (0: one shared). */
export interface RowMajorView {
  rows: number
  cols: number
  ld: number
  batchStride: number
}

/** A cuBLASLt matrix layout (column-major): rows, cols, ld, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT and _STRIDED_BATCH_OFFSET (elements). */
export interface LtLayout {
  rows: number
  cols: number
  ld: number
  batchCount: number
  stride: number
}

/** One cuBLASLt matmul: D = opA(A)·opB(B) with D m × n, inner size k; A is tfjs' b and B is tfjs' a. */
export interface LtGemm {
  transA: boolean
  transB: boolean
  m: number
  n: number
  k: number
  A: LtLayout
  B: LtLayout
  C: LtLayout
}

const colMajor = (v: RowMajorView, batchCount: number): LtLayout => ({rows: v.cols, cols: v.rows, ld: v.ld, batchCount, stride: v.batchStride})

/** c = op(a)·op(b) over `batch` matrices (row-major views) → the cuBLASLt call; throws on mismatched sizes. */
export function ltGemm(a: RowMajorView, b: RowMajorView, c: RowMajorView, transA: boolean, transB: boolean, batch: number): LtGemm {
  const [M, K] = transA ? [a.cols, a.rows] : [a.rows, a.cols]
  const [K2, N] = transB ? [b.cols, b.rows] : [b.rows, b.cols]
  if (K !== K2 || c.rows !== M || c.cols !== N) throw new Error(`gemm: op(a) [${M}, ${K}] · op(b) [${K2}, ${N}] → c [${c.rows}, ${c.cols}] do not fit`)
  for (const v of [a, b, c]) if (v.ld < v.cols) throw new Error(`gemm: row stride ${v.ld} below ${v.cols} columns`)
  return {transA: transB, transB: transA, m: N, n: M, k: K, A: colMajor(b, batch), B: colMajor(a, batch), C: colMajor(c, batch)}
}

const prod = (xs: readonly number[]): number => xs.reduce((p, x) => p * x, 1)

/**
 * tfjs' BatchMatMul (a [..., ar, ac], b [..., br, bc], transposeA/B) on contiguous tensors:
 * the output shape and the one strided-batched call. A batch of 1 on either side is
 * broadcast with batch stride 0; other unequal batch shapes are refused (null), as the
 * native backend does.
 */
export function batchMatMulGemm(
  aShape: readonly number[],
  bShape: readonly number[],
  transA: boolean,
  transB: boolean,
): {outShape: number[]; gemm: LtGemm} | null {
  const [ar, ac] = aShape.slice(-2)
  const [br, bc] = bShape.slice(-2)
  const [aOuter, bOuter] = [aShape.slice(0, -2), bShape.slice(0, -2)]
  const [batchA, batchB] = [prod(aOuter), prod(bOuter)]
  if (batchA !== batchB && batchA !== 1 && batchB !== 1) return null
  if (batchA === batchB && batchA !== 1 && aOuter.join() !== bOuter.join()) return null
  const outer = batchA >= batchB ? aOuter : bOuter
  const batch = Math.max(batchA, batchB)
  const M = transA ? ac : ar
  const N = transB ? br : bc
  const a = {rows: ar, cols: ac, ld: ac, batchStride: batchA === 1 ? 0 : ar * ac}
  const b = {rows: br, cols: bc, ld: bc, batchStride: batchB === 1 ? 0 : br * bc}
  const c = {rows: M, cols: N, ld: N, batchStride: M * N}
  return {outShape: [...outer, M, N], gemm: ltGemm(a, b, c, transA, transB, batch)}
}

/**
 * One product of the attention: the call, batched over heads, and for sequence `b` the element
 * offsets of its row-major operands a, b and c (that is, of cuBLASLt's B, A and C: see ltGemm).
 */
export interface AttentionGemm {
  gemm: LtGemm
  offsets(b: number): {a: number; b: number; c: number}
}

/**
 * The products of multi-head attention on q, k, v, ctx [B, T, H] (A heads of d side by side,
 * head h at column h·d, row stride H) and probs [B, A, T, T] contiguous, without moving heads:
 * each is batched over the A heads (stride d in [B, T, H] tensors, T·T in probs) and issued
 * once per sequence b (offset b·T·H, b·A·T·T): one batch stride cannot walk both axes.
 *   scores = Q·Kᵀ, ctx = P·V; backward dP = dC·Vᵀ, dV = Pᵀ·dC, dQ = dS·K, dK = dSᵀ·Q.
 */
export function attentionGemms(B: number, T: number, A: number, d: number): Record<'scores' | 'context' | 'dProbs' | 'dV' | 'dQ' | 'dK', AttentionGemm> {
  const H = A * d
  const head: RowMajorView = {rows: T, cols: d, ld: H, batchStride: d} // [T, d] of one head
  const tt: RowMajorView = {rows: T, cols: T, ld: T, batchStride: T * T} // [T, T] of one head
  const perB = (x: 'h' | 't') => (b: number) => b * (x === 'h' ? T * H : A * T * T)
  const call = (a: RowMajorView, ax: 'h' | 't', bv: RowMajorView, bx: 'h' | 't', c: RowMajorView, cx: 'h' | 't', tA: boolean, tB: boolean): AttentionGemm => {
    const [oa, ob, oc] = [perB(ax), perB(bx), perB(cx)]
    return {gemm: ltGemm(a, bv, c, tA, tB, A), offsets: (b) => ({a: oa(b), b: ob(b), c: oc(b)})}
  }
  return {
    scores: call(head, 'h', head, 'h', tt, 't', false, true), // Q [T, d] · Kᵀ → [T, T]
    context: call(tt, 't', head, 'h', head, 'h', false, false), // P [T, T] · V [T, d] → [T, d]
    dProbs: call(head, 'h', head, 'h', tt, 't', false, true), // dC · Vᵀ → [T, T]
    dV: call(tt, 't', head, 'h', head, 'h', true, false), // Pᵀ · dC → [T, d]
    dQ: call(tt, 't', head, 'h', head, 'h', false, false), // dS · K → [T, d]
    dK: call(tt, 't', head, 'h', head, 'h', true, false), // dSᵀ · Q → [T, d]
  }
}
