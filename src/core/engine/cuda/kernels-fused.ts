import type * as tf from '@tensorflow/tfjs'
import {type CudaDevice, type CudaKernel, type Dim3, registerCudaKernel} from './kernel-table.js'
import {sizeOf} from './launch-util.js'

/**
 * span's fused kernels on the cuda backend (native/cuda/kernels: layernorm.cu, cross_entropy.cu,
 * dropout.cu, sum_squares.cu, adamw.cu, bias_gelu.cu, linear_gelu.cu, bias_grad.cu,
 * residual_layernorm.cu, attention_softmax.cu; GEMMs through cuBLASLt), with the semantics of
 * the native ones (fused-native.ts) and the composite formulas (fused-composite.ts). Simple kernels (issue 20): each call here is the
 * interface issue 21's fast kernels replace. A kernel returns null (the composite runs) for what
 * it does not take: empty tensors, dtypes other than float32 (int32 labels).
 */
/** The block of a row kernel for rows of `width`: whole warps (they reduce with shuffles), at most 128, no more than the row needs. */
export const rowBlock = (width: number): Dim3 => [Math.min(128, Math.max(32, Math.ceil(width / 32) * 32)), 1, 1]
const EW_BLOCK: Dim3 = [256, 1, 1]
const rowGrid = (rows: number): Dim3 => [Math.max(1, Math.min(rows, 65535)), 1, 1]
const ewGrid = (n: number): Dim3 => [Math.max(1, Math.min(Math.ceil(n / 256), 4096)), 1, 1]
const f32 = (...ts: (tf.TensorInfo | undefined)[]) => ts.every((t) => t?.dtype === 'float32' && sizeOf(t.shape) > 0)

/** SpanLayerNorm: [y, mean [rows], rstd [rows]] over the last axis. */
const layerNorm: CudaKernel = ({inputs: {x, g, b}, attrs, backend}) => {
  if (!f32(x, g, b)) return null
  const H = x!.shape[x!.shape.length - 1]
  const rows = sizeOf(x!.shape) / H
  const [y, mean, rstd] = [backend.makeOutput(x!.shape, 'float32'), backend.makeOutput([rows], 'float32'), backend.makeOutput([rows], 'float32')]
  const args = [x, g, b, y, mean, rstd].map((t) => ({ptr: t!}))
  backend.launch('layernorm', 'span_layernorm_forward_f32', rowGrid(rows), rowBlock(H), [...args, {i64: rows}, {i32: H}, {f32: Number(attrs?.eps)}])
  return [y, mean, rstd]
}

/** SpanLayerNormGrad: [dx, dg, db] from dy, x, g, mean, rstd. */
const layerNormGrad: CudaKernel = ({inputs: {dy, x, g, mean, rstd}, backend}) => {
  if (!f32(dy, x, g, mean, rstd)) return null
  const H = x!.shape[x!.shape.length - 1]
  const rows = sizeOf(x!.shape) / H
  const [dx, dg, db] = [backend.makeOutput(x!.shape, 'float32'), backend.makeOutput([H], 'float32'), backend.makeOutput([H], 'float32')]
  const p = (ts: (tf.TensorInfo | undefined)[]) => ts.map((t) => ({ptr: t!}))
  backend.launch('layernorm', 'span_layernorm_backward_dx_f32', rowGrid(rows), rowBlock(H), [...p([dy, x, g, mean, rstd, dx]), {i64: rows}, {i32: H}])
  backend.launch('layernorm', 'span_layernorm_backward_params_f32', ewGrid(H), EW_BLOCK, [...p([dy, x, mean, rstd, dg, db]), {i64: rows}, {i32: H}])
  return [dx, dg, db]
}

/** SpanCrossEntropy: [Σ_n lse_n − logits[n, label_n] (NaN for a label outside [0, C)), lse [N]]. */
const crossEntropy: CudaKernel = ({inputs: {logits, labels}, backend}) => {
  if (!f32(logits) || labels?.dtype !== 'int32') return null
  const [N, C] = logits!.shape
  const [loss, lse, rowLoss] = [backend.makeOutput([], 'float32'), backend.makeOutput([N], 'float32'), backend.makeOutput([N], 'float32')]
  backend.launch('cross_entropy', 'span_cross_entropy_rows_f32', rowGrid(N), rowBlock(C), [
    {ptr: logits!},
    {ptr: labels},
    {ptr: lse},
    {ptr: rowLoss},
    {i64: N},
    {i32: C},
  ])
  backend.launch('cross_entropy', 'span_cross_entropy_total_f32', [1, 1, 1], EW_BLOCK, [{ptr: rowLoss}, {ptr: loss}, {i64: N}])
  backend.free(rowLoss)
  return [loss, lse]
}

/** SpanCrossEntropyGrad: dlogits [N, C] = dy·(softmax − onehot), dy read on the device. */
const crossEntropyGrad: CudaKernel = ({inputs: {dy, logits, labels, lse}, backend}) => {
  if (!f32(dy, logits, lse) || labels?.dtype !== 'int32') return null
  const [N, C] = logits!.shape
  const d = backend.makeOutput([N, C], 'float32')
  const args = [logits!, labels, lse!, dy!, d].map((t) => ({ptr: t}))
  backend.launch('cross_entropy', 'span_cross_entropy_backward_f32', ewGrid(N * C), EW_BLOCK, [...args, {i64: N}, {i64: C}])
  return d
}

/** out = dropout(x) with native's mask of (seed, flat index) (dropout.cu). */
function dropoutInto(backend: CudaDevice, x: tf.TensorInfo | number, out: tf.TensorInfo | number, n: number, keep: number, seed: number): void {
  backend.launch('dropout', 'span_dropout_f32', ewGrid(n), EW_BLOCK, [{ptr: x}, {ptr: out}, {i64: n}, {f32: keep}, {seed}])
}

/** SpanDropout: inverted dropout; its own gradient (the same mask from the same seed). */
const dropout: CudaKernel = ({inputs: {x}, attrs, backend}) => {
  const rate = Number(attrs?.rate)
  if (!f32(x) || !(rate > 0 && rate < 1)) return null
  const out = backend.makeOutput(x!.shape, 'float32')
  dropoutInto(backend, x!, out, sizeOf(x!.shape), 1 - rate, Number(attrs?.seed ?? 0))
  return out
}

/** SpanSumSquares: Σ x² over every input (in double, fixed order), a float32 scalar on the device. */
const sumSquares: CudaKernel = ({inputs, backend}) => {
  const ts = Object.values(inputs)
  if (!ts.every((t) => t?.dtype === 'float32')) return null
  const grids = ts.map((t) => Math.min(Math.ceil(sizeOf(t!.shape) / 256), 64))
  const count = grids.reduce((a, b) => a + b, 0)
  if (count === 0) return backend.zeros([], 'float32')
  const out = backend.makeOutput([], 'float32')
  const partials = backend.makeOutput([count * 2], 'float32') // count doubles
  let at = backend.ptr(partials)
  ts.forEach((t, i) => {
    if (grids[i] === 0) return
    backend.launch('sum_squares', 'span_sum_squares_partial_f32', [grids[i], 1, 1], EW_BLOCK, [{ptr: t!}, {i64: sizeOf(t!.shape)}, {ptr: at}])
    at += grids[i] * 8
  })
  backend.launch('sum_squares', 'span_sum_partials_f32', [1, 1, 1], EW_BLOCK, [{ptr: partials}, {i64: count}, {ptr: out}])
  backend.free(partials)
  return out
}

/**
 * SpanAdamW: [p′, m′, v′] into new tensors. The clipping factor is read on the device: the input
 * `scale` (a float32 scalar tensor) when given, else the attr gradScale written to one.
 */
const adamw: CudaKernel = ({inputs: {p, m, v, g, scale}, attrs, backend}) => {
  if (!f32(p, m, v, g) || ![m, v, g].every((t) => sizeOf(t!.shape) === sizeOf(p!.shape))) return null
  const h = attrs as Record<string, number>
  const n = sizeOf(p!.shape)
  const s = scale ?? backend.fill([], 'float32', h.gradScale ?? 1)
  const outs = [0, 1, 2].map(() => backend.makeOutput(p!.shape, 'float32'))
  const hyper = [h.lr, h.beta1, h.beta2, h.eps, h.weightDecay, h.bc1, h.bc2].map((f) => ({f32: f}))
  const ptrs = [p, m, v, g, ...outs].map((t) => ({ptr: t!}))
  backend.launch('adamw', 'span_adamw_f32', ewGrid(n), EW_BLOCK, [...ptrs, {i64: n}, ...hyper, {ptr: s}])
  if (!scale) backend.free(s)
  return outs
}

/**
 * The Linear forward's bias through cuBLASLt's BIAS epilogue (default; its definition is the bias
 * add's: D[i, j] += bias[i] in fp32, the stand-in models it exactly), or, with SPAN_CUDA_LT_BIAS=0,
 * the separate span_bias_add_f32 launch after the GEMM.
 */
const ltBias = (): boolean => process.env.SPAN_CUDA_LT_BIAS !== '0'

/**
 * Opt-in only (SPAN_CUDA_GELU_EPILOGUE=tanh; it changes the model's function): the Linear with
 * GeLU through cuBLASLt's GELU_AUX_BIAS epilogue, the tanh form (up to 4.7e-4 from BERT's erf
 * GeLU), z saved in its aux, and the tanh form's derivative backward. cuBLASLt needs the aux ld (M)
 * a multiple of 8: other widths keep the erf kernels.
 */
const tanhGelu = (M: number): boolean => process.env.SPAN_CUDA_GELU_EPILOGUE === 'tanh' && M % 8 === 0

/** SpanLinear: [y, z], z = x·Wᵀ + b [N, out]; y = GeLU(z) (erf) with z kept (linear_gelu.cu, one pass), else y = z and [0]. */
const linear: CudaKernel = ({inputs: {x, w, b}, attrs, backend}) => {
  if (!f32(x, w, b) || x!.shape.length !== 2) return null
  const [N, K] = x!.shape
  const M = w!.shape[0]
  const z = backend.makeOutput([N, M], 'float32')
  if (attrs?.activation !== 'gelu' && ltBias()) {
    backend.gemm({a: x!, b: w!, c: z, M: N, N: M, K, transA: false, transB: true, epilogue: 'bias', bias: b!}) // [N, in]·[out, in]ᵀ + b, one launch
    return [z, backend.makeOutput([0], 'float32')]
  }
  backend.gemm({a: x!, b: w!, c: z, M: N, N: M, K, transA: false, transB: true}) // [N, in]·[out, in]ᵀ
  if (attrs?.activation !== 'gelu') {
    backend.launch('bias_gelu', 'span_bias_add_f32', ewGrid(N * M), EW_BLOCK, [{ptr: z}, {ptr: b!}, {ptr: z}, {i64: N}, {i64: M}])
    return [z, backend.makeOutput([0], 'float32')]
  }
  const y = backend.makeOutput([N, M], 'float32')
  if (tanhGelu(M)) {
    backend.gemm({a: x!, b: w!, c: y, M: N, N: M, K, transA: false, transB: true, epilogue: 'gelu_aux_bias', bias: b!, aux: z, auxLd: M}) // y = gelu_tanh(z), z = x·Wᵀ + b kept
    return [y, z]
  }
  backend.launch('linear_gelu', 'span_bias_gelu_keep_f32', ewGrid(N * M), EW_BLOCK, [{ptr: z}, {ptr: b!}, {ptr: y}, {i64: N}, {i64: M}]) // z += b, y = gelu(z)
  return [y, z]
}

/** Column sums of 32-row chunks: a 2-D grid, x over columns (128 a block), y over chunks. */
const chunkGrid = (rows: number, cols: number): Dim3 => [Math.min(Math.ceil(cols / 128), 64), Math.max(1, Math.min(Math.ceil(rows / 32), 65535)), 1]

/** db = Σ_rows dz (bias_grad.cu: per-chunk column sums over the whole grid, then the chunks in order; the bits of span_bias_grad_f32). */
function biasGrad(backend: CudaDevice, dz: tf.TensorInfo, db: tf.TensorInfo, N: number, M: number): void {
  const chunks = Math.ceil(N / 32)
  const partials = backend.makeOutput([chunks, M], 'float32')
  backend.launch('bias_grad', 'span_bias_grad_partials_f32', chunkGrid(N, M), [128, 1, 1], [{ptr: dz}, {ptr: partials}, {i64: N}, {i64: M}])
  backend.launch('bias_grad', 'span_bias_grad_sum_f32', ewGrid(M), EW_BLOCK, [{ptr: partials}, {ptr: db}, {i64: chunks}, {i64: M}])
  backend.free(partials)
}

/** dz = dy·gelu′(z) and db = Σ_rows dz (linear_gelu.cu: per-chunk column sums, then the chunks in order). */
function geluBackward(backend: CudaDevice, dy: tf.TensorInfo, z: tf.TensorInfo, dz: tf.TensorInfo, db: tf.TensorInfo, N: number, M: number): void {
  const chunks = Math.ceil(N / 32)
  const partials = backend.makeOutput([chunks, M], 'float32')
  backend.launch(
    'linear_gelu',
    tanhGelu(M) ? 'span_gelu_tanh_backward_partials_f32' : 'span_gelu_backward_partials_f32',
    chunkGrid(N, M),
    [128, 1, 1],
    [{ptr: dy}, {ptr: z}, {ptr: dz}, {ptr: partials}, {i64: N}, {i64: M}],
  )
  backend.launch('linear_gelu', 'span_gelu_bias_sum_f32', ewGrid(M), EW_BLOCK, [{ptr: partials}, {ptr: db}, {i64: chunks}, {i64: M}])
  backend.free(partials)
}

/** SpanLinearGrad: [dx, dw, db]; dz = dy·gelu′(z) for GeLU. */
const linearGrad: CudaKernel = ({inputs: {dy, x, w, z}, attrs, backend}) => {
  const gelu = attrs?.activation === 'gelu'
  if (!f32(dy, x, w) || (gelu && !f32(z)) || x!.shape.length !== 2) return null
  const [N, K] = x!.shape
  const M = w!.shape[0]
  const [dx, dw, db] = [backend.makeOutput([N, K], 'float32'), backend.makeOutput([M, K], 'float32'), backend.makeOutput([M], 'float32')]
  const dz = gelu ? backend.makeOutput([N, M], 'float32') : dy!
  if (gelu) geluBackward(backend, dy!, z!, dz, db, N, M)
  else biasGrad(backend, dz, db, N, M)
  backend.gemm({a: dz, b: w!, c: dx, M: N, N: K, K: M, transA: false, transB: false}) // [N, out]·[out, in]
  backend.gemm({a: dz, b: x!, c: dw, M, N: K, K: N, transA: true, transB: false}) // [N, out]ᵀ·[N, in]
  if (gelu) backend.free(dz)
  return [dx, dw, db]
}

/**
 * SpanResidualLayerNorm: [y, s, mean, rstd]; the GEMM z = x·Wᵀ [N, H] into s, then one kernel
 * (residual_layernorm.cu): s = dropout(z + b) + residual in place, y = LayerNorm(s).
 */
const residualLayerNorm: CudaKernel = ({inputs: {x, w, b, residual, g, beta}, attrs, backend}) => {
  if (!f32(x, w, b, residual, g, beta) || x!.shape.length !== 2) return null
  const [N, K] = x!.shape
  const H = w!.shape[0]
  const s = backend.makeOutput([N, H], 'float32')
  backend.gemm({a: x!, b: w!, c: s, M: N, N: H, K, transA: false, transB: true}) // [N, in]·[H, in]ᵀ
  const [y, mean, rstd] = [backend.makeOutput([N, H], 'float32'), backend.makeOutput([N], 'float32'), backend.makeOutput([N], 'float32')]
  const ptrs = [s, b, residual, g, beta, s, y, mean, rstd].map((t) => ({ptr: t!}))
  const drop = [{f32: 1 - Number(attrs?.rate ?? 0)}, {seed: Number(attrs?.seed ?? 0)}]
  backend.launch('residual_layernorm', 'span_residual_layernorm_forward_f32', rowGrid(N), rowBlock(H), [
    ...ptrs,
    {i64: N},
    {i32: H},
    {f32: Number(attrs?.eps)},
    ...drop,
  ])
  return [y, s, mean, rstd]
}

/** SpanResidualLayerNormGrad: [dx, dw, db, dresidual, dg, dbeta]: two kernels (residual_layernorm.cu), then dx = dz·W, dW = dzᵀ·x. */
const residualLayerNormGrad: CudaKernel = ({inputs: {dy, x, w, g, s, mean, rstd}, attrs, backend}) => {
  if (!f32(dy, x, w, g, s, mean, rstd) || x!.shape.length !== 2) return null
  const [N, K] = x!.shape
  const H = w!.shape[0]
  const chunks = Math.ceil(N / 32)
  const out = (shape: number[]) => backend.makeOutput(shape, 'float32')
  const [dx, dw, db, ds, dg, dbeta, dz, partials] = [out([N, K]), out([H, K]), out([H]), out([N, H]), out([H]), out([H]), out([N, H]), out([chunks, 3, H])]
  const drop = [{f32: 1 - Number(attrs?.rate ?? 0)}, {seed: Number(attrs?.seed ?? 0)}]
  const rows = [dy, s, g, mean, rstd, ds, dz, partials].map((t) => ({ptr: t!}))
  backend.launch('residual_layernorm', 'span_residual_layernorm_backward_f32', rowGrid(chunks), rowBlock(H), [...rows, {i64: N}, {i32: H}, ...drop])
  const params = [partials, dg, dbeta, db].map((t) => ({ptr: t}))
  backend.launch('residual_layernorm', 'span_residual_layernorm_params_f32', ewGrid(H), EW_BLOCK, [...params, {i64: chunks}, {i32: H}])
  backend.gemm({a: dz, b: w!, c: dx, M: N, N: K, K: H, transA: false, transB: false}) // [N, H]·[H, in]
  backend.gemm({a: dz, b: x!, c: dw, M: H, N: K, K: N, transA: true, transB: false}) // [N, H]ᵀ·[N, in]
  backend.free(dz)
  backend.free(partials)
  return [dx, dw, db, ds, dg, dbeta]
}

export const FUSED_CUDA: Record<string, CudaKernel> = {
  SpanLayerNorm: layerNorm,
  SpanLayerNormGrad: layerNormGrad,
  SpanCrossEntropy: crossEntropy,
  SpanCrossEntropyGrad: crossEntropyGrad,
  SpanDropout: dropout,
  SpanSumSquares: sumSquares,
  SpanAdamW: adamw,
  SpanLinear: linear,
  SpanLinearGrad: linearGrad,
  SpanResidualLayerNorm: residualLayerNorm,
  SpanResidualLayerNormGrad: residualLayerNormGrad,
}

/** Registers the fused kernels (and attention's, kernels-attention.ts) as the cuda implementations. */
export function registerFused(): void {
  for (const [name, k] of Object.entries(FUSED_CUDA)) registerCudaKernel(name, k)
}
