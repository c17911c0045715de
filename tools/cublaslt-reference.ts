/**
 * What cublasLtMatmul computes, from cublasLt.h's definitions, in double: per batch b,
 *   x = alpha · Σ_q op(A)[i, q] · op(B)[q, j] + beta · C[i, j] (+ bias[i])
 * then the epilogue (GELU_AUX* store x in aux first; GELU is the tanh form; DGELU multiplies by
 * the tanh form's derivative at aux; BGRADA/BGRADB/DGELU_BGRAD write the bias gradient), stored
 * in D's type (bf16: round to nearest even). Column-major: element (i, j) of a matrix with
 * leading dimension ld is at b·stride + i + j·ld. With each value, the scale of its terms
 * (Σ|terms|), for tolerances.
 */
import {type Buf, EPI, type LtCase, type Mat, SENTINEL, T, span} from './cublaslt-cases.js'

const f32 = new Float32Array(1)
const u32 = new Uint32Array(f32.buffer)

/** fp32 → bf16 → number, round to nearest even (CUDA's __float2bfloat16). */
export function roundBf16(x: number): number {
  f32[0] = x
  const u = u32[0]
  const rest = (u & 0xffff) >>> 0
  let h = u >>> 16
  if (rest > 0x8000 || (rest === 0x8000 && (h & 1) === 1)) h += 1
  u32[0] = (h << 16) >>> 0
  return f32[0]
}

/** fp32 → TF32 (10 mantissa bits), to nearest, ties away from zero. */
export function roundTf32(x: number): number {
  f32[0] = x
  u32[0] = ((u32[0] + 0x1000) & ~0x1fff) >>> 0
  return f32[0]
}

const K = Math.sqrt(2 / Math.PI)
export const geluTanh = (x: number): number => 0.5 * x * (1 + Math.tanh(K * (x + 0.044715 * x ** 3)))
export const dgeluTanh = (x: number): number => {
  const t = Math.tanh(K * (x + 0.044715 * x ** 3))
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * 0.044715 * x * x)
}

/** Element (i, j) of batch b of a matrix. */
const at = (m: Mat, b: number, i: number, j: number): number => b * m.stride + i + j * m.ld

export interface Expected {
  /** every buffer the call may write, whole (untouched elements keep their sentinel) */
  D: Float64Array
  bias?: Float64Array
  aux?: Float64Array
  /** per element of D / aux: the scale of its terms (0 where untouched) */
  scaleD: Float64Array
  scaleAux?: Float64Array
}

/** op(A)[i, q] and op(B)[q, j] of batch b, rounded as the compute type rounds its inputs. */
function operands(c: LtCase, A: Float64Array, B: Float64Array) {
  const round = c.compute === 77 ? roundTf32 : c.compute === 75 ? roundBf16 : (x: number) => x
  return {
    a: (b: number, i: number, q: number) => round(A[c.transa ? at(c.A, b, q, i) : at(c.A, b, i, q)]),
    b: (b: number, q: number, j: number) => round(B[c.transb ? at(c.B, b, j, q) : at(c.B, b, q, j)]),
    rawA: (b: number, i: number, q: number) => A[c.transa ? at(c.A, b, q, i) : at(c.A, b, i, q)],
    rawB: (b: number, q: number, j: number) => B[c.transb ? at(c.B, b, j, q) : at(c.B, b, q, j)],
  }
}

const has = (e: number, ...set: number[]): boolean => set.includes(e)

/** x for (b, i, j) before the activation, and its scale. */
function preActivation(c: LtCase, inp: Record<string, Buf>, ops: ReturnType<typeof operands>, b: number, i: number, j: number) {
  const k = c.transa ? c.A.rows : c.A.cols
  let acc = 0
  let scale = 0
  for (let q = 0; q < k; q++) {
    const t = ops.a(b, i, q) * ops.b(b, q, j)
    acc += t
    scale += Math.abs(t)
  }
  let x = c.alpha * acc
  scale *= Math.abs(c.alpha)
  if (c.beta !== 0) {
    const cv = c.beta * inp.C.values[at(c.C, b, i, j)]
    x += cv
    scale += Math.abs(cv)
  }
  if (has(c.epilogue, EPI.BIAS, EPI.RELU_BIAS, EPI.GELU_BIAS, EPI.GELU_AUX_BIAS)) {
    const bias = inp.bias.values[b * (c.biasBatchStride ?? 0) + i]
    x += bias
    scale += Math.abs(bias)
  }
  return {x, scale}
}

/** The epilogue's activation (or its gradient) of x; aux the GELU input for DGELU. */
function activate(e: number, x: number, aux: number): number {
  if (has(e, EPI.RELU, EPI.RELU_BIAS)) return Math.max(x, 0)
  if (has(e, EPI.GELU, EPI.GELU_BIAS, EPI.GELU_AUX, EPI.GELU_AUX_BIAS)) return geluTanh(x)
  if (has(e, EPI.DGELU, EPI.DGELU_BGRAD)) return x * dgeluTanh(aux)
  return x
}

const store = (type: number, x: number): number => (type === T.bf16 ? roundBf16(x) : Math.fround(x))

/** The expected buffers of case c from its inputs (as lt-run wrote them back). */
export function reference(c: LtCase, inp: Record<string, Buf>): Expected {
  const [m, n] = [c.D.rows, c.D.cols]
  const inPlace = c.extra?.includes('alias') === true // D is C: what D does not cover keeps C's values
  const D = inPlace ? Float64Array.from(inp.C.values) : new Float64Array(span(c.D)).fill(SENTINEL)
  const scaleD = new Float64Array(D.length)
  const auxOut = has(c.epilogue, EPI.GELU_AUX, EPI.GELU_AUX_BIAS)
  const aux = auxOut ? new Float64Array(c.auxLen ?? 0).fill(SENTINEL) : inp.aux?.values
  const scaleAux = new Float64Array(aux?.length ?? 0)
  const bias = inp.bias ? Float64Array.from(inp.bias.values) : undefined
  const ops = operands(c, inp.A?.values ?? new Float64Array(0), inp.B?.values ?? new Float64Array(0))
  const rowSums = new Float64Array(m)
  for (let b = 0; b < c.D.batch; b++) {
    rowSums.fill(0)
    for (let j = 0; j < n; j++)
      for (let i = 0; i < m; i++) {
        const {x, scale} = preActivation(c, inp, ops, b, i, j)
        const auxAt = b * (c.auxBatchStride ?? 0) + i + j * (c.auxLd ?? 0)
        if (auxOut && aux) [aux[auxAt], scaleAux[auxAt]] = [store(c.D.type, x), scale]
        const y = activate(c.epilogue, x, aux ? aux[auxAt] : 0)
        rowSums[i] += y
        D[at(c.D, b, i, j)] = store(c.D.type, y)
        scaleD[at(c.D, b, i, j)] = scale * 1.2
      }
    if (bias) biasGradient(c, ops, b, rowSums, bias)
  }
  return {D, aux: auxOut ? aux : undefined, bias, scaleD, scaleAux}
}

/** BGRADA: Σ_q op(A)[i, q]; BGRADB: Σ_q op(B)[q, j]; DGELU_BGRAD: Σ_j of D before rounding. */
function biasGradient(c: LtCase, ops: ReturnType<typeof operands>, b: number, rowSums: Float64Array, bias: Float64Array): void {
  const k = c.transa ? c.A.rows : c.A.cols
  const off = b * (c.biasBatchStride ?? 0)
  const sum = (len: number, f: (q: number) => number) => Array.from({length: len}, (_, q) => f(q)).reduce((s, v) => s + v, 0)
  if (c.epilogue === EPI.BGRADA)
    for (let i = 0; i < c.D.rows; i++)
      bias[off + i] = store(
        c.D.type,
        sum(k, (q) => ops.rawA(b, i, q)),
      )
  if (c.epilogue === EPI.BGRADB)
    for (let j = 0; j < c.D.cols; j++)
      bias[off + j] = store(
        c.D.type,
        sum(k, (q) => ops.rawB(b, q, j)),
      )
  if (c.epilogue === EPI.DGELU_BGRAD) for (let i = 0; i < c.D.rows; i++) bias[off + i] = store(c.D.type, rowSums[i])
}
