/**
 * The cuBLASLt cases (tools/cublaslt-cases.ts): layouts and transposes with padded leading
 * dimensions, strided batches (a shared operand: batch stride 0), alpha/beta (beta 0 never reads
 * C, which may be null; D ≠ C; in place), every epilogue span may use, fp32 / TF32 / FAST_16BF
 * compute, bf16 inputs with fp32 accumulation, and what the library refuses. Sizes are odd and
 * small, so that the saved fixture stays small.
 */
import {COMPUTE, EPI, type LtCase, type Mat, STATUS, T, span} from './cublaslt-cases.js'

interface Spec {
  name: string
  m: number
  n: number
  k: number
  transa?: boolean
  transb?: boolean
  batch?: number
  pad?: number
  ab?: number
  cd?: number
  compute?: number
  epilogue?: number
  alpha?: number
  beta?: number
  /** batch stride 0 for these operands (one matrix shared by every batch) */
  shared?: ('A' | 'B' | 'C')[]
  /** C filled (default: when beta ≠ 0); 'nan': filled with NaN; 'none': no C buffer (a null pointer) */
  c?: 'fill' | 'nan' | 'none'
  biasBatchStride?: number
  extra?: string[]
  expect?: [number, number]
  edit?: (c: LtCase) => void
}

const mat = (type: number, rows: number, cols: number, pad: number, batch: number, shared: boolean): Mat => {
  const ld = Math.max(1, rows + pad)
  return {type, rows, cols, ld, batch, stride: shared ? 0 : ld * cols + pad}
}

const usesBias = (e: number): boolean => [EPI.BIAS, EPI.RELU_BIAS, EPI.GELU_BIAS, EPI.GELU_AUX_BIAS].includes(e as never)
const biasOut = (e: number): boolean => [EPI.BGRADA, EPI.BGRADB, EPI.DGELU_BGRAD].includes(e as never)
const usesAux = (e: number): boolean => [EPI.GELU_AUX, EPI.GELU_AUX_BIAS, EPI.DGELU, EPI.DGELU_BGRAD].includes(e as never)

/** A case from its sizes: inputs seeded 1 (A), 2 (B), 3 (C), 4 (bias), 5 (aux). */
export function gemm(s: Spec): LtCase {
  const [batch, pad, ab, cd, e] = [s.batch ?? 1, s.pad ?? 0, s.ab ?? T.f32, s.cd ?? T.f32, s.epilogue ?? EPI.DEFAULT]
  const sh = (x: 'A' | 'B' | 'C') => (s.shared ?? []).includes(x)
  const A = s.transa ? mat(ab, s.k, s.m, pad, batch, sh('A')) : mat(ab, s.m, s.k, pad, batch, sh('A'))
  const B = s.transb ? mat(ab, s.n, s.k, pad, batch, sh('B')) : mat(ab, s.k, s.n, pad, batch, sh('B'))
  const [C, D] = [mat(cd, s.m, s.n, pad, batch, sh('C')), mat(cd, s.m, s.n, pad, batch, false)]
  const beta = s.beta ?? 0
  const c: LtCase = {
    name: s.name,
    compute: s.compute ?? COMPUTE.f32,
    transa: !!s.transa,
    transb: !!s.transb,
    epilogue: e,
    A,
    B,
    C,
    D,
    alpha: s.alpha ?? 1,
    beta,
    fills: [],
  }
  const size = span
  c.fills.push(`fill A ${ab} ${size(A)} 1`, `fill B ${ab} ${size(B)} 2`)
  const cMode = s.c ?? (beta !== 0 ? 'fill' : 'none')
  if (cMode === 'fill') c.fills.push(`fill C ${cd} ${size(C)} 3`)
  if (cMode === 'nan') c.fills.push(`const C ${cd} ${size(C)} nan`)
  if (usesBias(e) || biasOut(e)) {
    const len = e === EPI.BGRADB ? s.n : s.m
    c.biasBatchStride = s.biasBatchStride
    c.biasLen = (batch - 1) * (s.biasBatchStride ?? 0) + len
    if (usesBias(e)) c.fills.push(`fill bias ${cd} ${c.biasLen} 4`)
  }
  if (usesAux(e)) {
    c.auxLd = Math.ceil(s.m / 8) * 8
    c.auxBatchStride = batch > 1 ? c.auxLd * s.n : 0
    c.auxLen = (batch - 1) * c.auxBatchStride + c.auxLd * s.n
    if (e === EPI.DGELU || e === EPI.DGELU_BGRAD) c.fills.push(`fill aux ${cd} ${c.auxLen} 5`)
  }
  c.extra = s.extra
  c.expect = s.expect
  s.edit?.(c)
  return c
}

const TN: [boolean, boolean][] = [
  [false, false],
  [false, true],
  [true, false],
  [true, true],
]

/** The cases that compute something (their outputs are compared with the reference). */
export const CASES: LtCase[] = [
  ...TN.map(([ta, tb]) => gemm({name: `layout ${ta ? 'T' : 'N'}${tb ? 'T' : 'N'} 5x7x3 ld+3`, m: 5, n: 7, k: 3, transa: ta, transb: tb, pad: 3})),
  gemm({name: 'layout TT 33x17x64 ld+1', m: 33, n: 17, k: 64, transa: true, transb: true, pad: 1}),
  gemm({name: 'batch 3 strided', m: 4, n: 6, k: 5, batch: 3, pad: 2}),
  gemm({name: 'batch 3, A shared (stride 0)', m: 4, n: 6, k: 5, batch: 3, shared: ['A'], transb: true}),
  gemm({name: 'batch 3, B shared (stride 0)', m: 4, n: 6, k: 5, batch: 3, shared: ['B'], transa: true}),
  gemm({name: 'batch 3, C shared (stride 0), beta 1', m: 4, n: 6, k: 5, batch: 3, shared: ['C'], beta: 1}),
  gemm({name: 'alpha 0.5 beta -1.5', m: 6, n: 5, k: 7, alpha: 0.5, beta: -1.5, pad: 1}),
  gemm({name: 'beta 0 never reads C (C all NaN)', m: 6, n: 5, k: 7, c: 'nan'}),
  gemm({name: 'beta 0, C null', m: 6, n: 5, k: 7, c: 'none'}),
  gemm({name: 'k 0: D = beta C', m: 3, n: 4, k: 0, beta: 2, edit: (c) => c.fills.splice(0, 2)}),
  ...(['RELU', 'BIAS', 'RELU_BIAS', 'GELU', 'GELU_BIAS', 'GELU_AUX', 'GELU_AUX_BIAS', 'DGELU', 'DGELU_BGRAD', 'BGRADA', 'BGRADB'] as const).map((e) =>
    gemm({name: `epilogue ${e}`, m: 6, n: 5, k: 4, epilogue: EPI[e], pad: 1}),
  ),
  gemm({name: 'epilogue GELU_BIAS, batch 2, bias batch stride 6', m: 6, n: 5, k: 4, batch: 2, epilogue: EPI.GELU_BIAS, biasBatchStride: 6}),
  gemm({name: 'epilogue BGRADA, A transposed', m: 6, n: 5, k: 9, transa: true, epilogue: EPI.BGRADA}),
  gemm({name: 'epilogue BGRADB, B transposed', m: 6, n: 5, k: 9, transb: true, epilogue: EPI.BGRADB}),
  gemm({name: 'epilogue GELU_AUX_BIAS, batch 2', m: 6, n: 5, k: 4, batch: 2, epilogue: EPI.GELU_AUX_BIAS, biasBatchStride: 6}),
  // the cuda Linear forward (kernels-fused.ts linear): A = W [out, in] row-major, so transposed; bias of D's type, fp32
  gemm({name: 'Linear forward: A transposed, epilogue BIAS', m: 11, n: 9, k: 13, transa: true, epilogue: EPI.BIAS}),
  gemm({
    name: 'Linear forward at bf16: bf16 A (transposed), B → fp32 D, epilogue BIAS (bias fp32)',
    m: 11,
    n: 9,
    k: 33,
    ab: T.bf16,
    transa: true,
    epilogue: EPI.BIAS,
  }),
  gemm({name: 'compute TF32', m: 8, n: 8, k: 32, compute: COMPUTE.tf32}),
  gemm({name: 'compute FAST_16BF', m: 8, n: 8, k: 32, compute: COMPUTE.fast16bf}),
  gemm({name: 'bf16 A, B → fp32 D', m: 7, n: 9, k: 33, ab: T.bf16, transa: true}),
  gemm({name: 'bf16 A, B, C, D, beta 0.5', m: 7, n: 9, k: 33, ab: T.bf16, cd: T.bf16, beta: 0.5, pad: 1}),
  gemm({name: 'bf16 D, epilogue GELU_BIAS (bias bf16)', m: 7, n: 9, k: 33, ab: T.bf16, cd: T.bf16, epilogue: EPI.GELU_BIAS}),
  gemm({
    name: 'bf16 rounding: 4096 exact products (k 1)',
    m: 64,
    n: 64,
    k: 1,
    ab: T.bf16,
    cd: T.bf16,
    edit: (c) => (c.fills = ['fill A 14 64 11', 'fill B 14 64 12']),
  }),
  gemm({
    name: 'GELU is the tanh form: x on a grid over [-6, 6]',
    m: 481,
    n: 1,
    k: 1,
    epilogue: EPI.GELU,
    edit: (c) => (c.fills = ['ramp A 0 481 -6 0.025', 'const B 0 1 1']),
  }),
  gemm({name: 'in place: D is C, beta 1', m: 5, n: 4, k: 3, beta: 1, pad: 2, extra: ['alias']}),
  gemm({name: 'no algo given (the library picks)', m: 5, n: 4, k: 3, extra: ['noalgo']}),
]

const bad = (name: string, spec: Omit<Spec, 'name' | 'expect'>, status: number, heuristic: number = STATUS.notSupported): LtCase =>
  gemm({...spec, name, expect: [heuristic, status]})

/** What cuBLASLt refuses: [heuristic, matmul] statuses. */
export const REFUSALS: LtCase[] = [
  bad('k of A and B differ', {m: 4, n: 4, k: 3, edit: (c) => (c.B.rows = 5)}, STATUS.invalid),
  bad('C and D sizes differ', {m: 4, n: 4, k: 3, edit: (c) => (c.C.cols = 3)}, STATUS.invalid),
  bad('lda below rows', {m: 4, n: 4, k: 3, edit: (c) => (c.A.ld = 3)}, STATUS.invalid),
  bad('batch counts differ', {m: 4, n: 4, k: 3, batch: 2, edit: (c) => (c.B.batch = 1)}, STATUS.invalid),
  bad('fp32 A, B with bf16 D', {m: 4, n: 4, k: 3, cd: T.bf16}, STATUS.notSupported),
  bad('bf16 A with fp32 B', {m: 4, n: 4, k: 3, ab: T.bf16, edit: (c) => ((c.B.type = T.f32), (c.fills[1] = `fill B 0 12 2`))}, STATUS.notSupported),
  bad('TF32 compute on bf16 inputs', {m: 4, n: 4, k: 3, ab: T.bf16, compute: COMPUTE.tf32}, STATUS.notSupported),
  bad('C and D types differ', {m: 4, n: 4, k: 3, ab: T.bf16, cd: T.bf16, edit: (c) => (c.C.type = T.f32)}, STATUS.notSupported),
  bad('scale type bf16', {m: 4, n: 4, k: 3, edit: (c) => (c.scale = T.bf16)}, STATUS.notSupported),
  bad('row-major order (not modelled)', {m: 4, n: 4, k: 3, edit: (c) => (c.A.order = 1)}, STATUS.notSupported),
  bad('epilogue RELU_AUX (not modelled)', {m: 8, n: 4, k: 3, epilogue: EPI.RELU_AUX}, STATUS.notSupported),
  bad(
    'BIAS without a bias pointer',
    {m: 4, n: 4, k: 3, epilogue: EPI.BIAS, edit: (c) => ((c.fills = c.fills.filter((f) => !f.startsWith('fill bias'))), (c.biasLen = undefined))},
    STATUS.invalid,
    STATUS.ok,
  ),
  bad('GELU_AUX with aux ld not a multiple of 8', {m: 4, n: 4, k: 3, epilogue: EPI.GELU_AUX, edit: (c) => (c.auxLd = 6)}, STATUS.invalid),
  bad('bias type other than D type', {m: 4, n: 4, k: 3, epilogue: EPI.BIAS, extra: ['attr BIAS_DATA_TYPE 14']}, STATUS.notSupported),
  bad(
    "bf16 inputs, fp32 D, bf16 bias (the bias is of D's type)",
    {m: 4, n: 4, k: 3, ab: T.bf16, epilogue: EPI.BIAS, extra: ['attr BIAS_DATA_TYPE 14']},
    STATUS.notSupported,
  ),
  bad('beta 1 with C null', {m: 4, n: 4, k: 3, beta: 1, c: 'none'}, STATUS.invalid, STATUS.ok),
]
