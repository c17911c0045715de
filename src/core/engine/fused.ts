import * as tf from '@tensorflow/tfjs'
import {FUSED_KERNELS as K, runFused, setupFusedKernels} from './fused-kernels.js'
import {nativeRuns} from './fused-native.js'

/**
 * The fused layers as ops: each is one call of a named kernel (fused-kernels.ts) with its
 * gradient registered, whatever the backend: the native backend runs one addon call each way
 * (native/src/fused.cc), the others the composite formula (fused-composite.ts). The model
 * (src/core/model) and the trainer (src/core/train) call only these.
 */
setupFusedKernels()

/** How many times each fused op ran natively since the process started (for tests and profiling). */
export function fusedCounts(): Record<string, number> {
  return {...nativeRuns}
}

function expectDtype(op: string, t: tf.Tensor, dtype: tf.DataType): void {
  if (t.dtype !== dtype) throw new Error(`${op}: expected a ${dtype} tensor, got ${t.dtype}`)
}

/** act(x·Wᵀ + b) for x [N, in], W [out, in] (nn.Linear layout), b [out] → [N, out]; act is identity or GeLU (erf form). */
export function linearFused(x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, act: 'linear' | 'gelu'): tf.Tensor2D {
  for (const t of [x, w, b]) expectDtype('linear', t, 'float32')
  const [y, z] = runFused(K.linear, {x, w, b}, {activation: act}) as tf.Tensor[]
  z.dispose() // kept for the gradient, when there is one
  return y as tf.Tensor2D
}

/** LayerNorm over the last axis of x [..., H] with gain g [H] and bias b [H] (BertLayerNorm). */
export function layerNormFused(x: tf.Tensor, g: tf.Tensor1D, b: tf.Tensor1D, eps: number): tf.Tensor {
  for (const t of [x, g, b]) expectDtype('layerNorm', t, 'float32')
  const [y, mean, rstd] = runFused(K.layerNorm, {x, g, b}, {eps}) as tf.Tensor[]
  tf.dispose([mean, rstd])
  return y
}

/**
 * LayerNorm(dropout(x·Wᵀ + b) + residual) for x [N, in], W [H, in], b [H], residual [N, H], with
 * LayerNorm's gain g [H] and bias beta [H] (BertSelfOutput and BertOutput after their dense layer,
 * post-LN), → [N, H]: one kernel call each way. Dropout at `rate` (0: none) with the mask of
 * `seed` and the flat index into [N, H], as dropoutFused draws it; the backward pass redraws it.
 * Saves the LayerNorm input and its mean and rstd.
 */
export function residualLayerNormFused(
  x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D, residual: tf.Tensor2D, g: tf.Tensor1D, beta: tf.Tensor1D, o: {eps: number; rate: number; seed: number},
): tf.Tensor2D {
  for (const t of [x, w, b, residual, g, beta]) expectDtype('residualLayerNorm', t, 'float32')
  const [y, s, mean, rstd] = runFused(K.residualLayerNorm, {x, w, b, residual, g, beta}, o) as tf.Tensor[]
  tf.dispose([s, mean, rstd]) // kept for the gradient, when there is one
  return y as tf.Tensor2D
}

/** Σ_n −log softmax(logits[n])[labels[n]] for logits [N, C], labels [N] int32 in [0, C). */
export function crossEntropySumFused(logits: tf.Tensor2D, labels: tf.Tensor1D): tf.Scalar {
  expectDtype('cross-entropy', logits, 'float32')
  expectDtype('cross-entropy labels', labels, 'int32')
  const [loss, lse] = runFused(K.crossEntropy, {logits, labels}) as tf.Tensor[]
  lse.dispose()
  return loss as tf.Scalar
}

/**
 * Multi-head self-attention after the projections: q, k, v [B, T, H] with A heads side by side,
 * maskAdd [B, T] (0 to attend, −10000 for padding) → context [B, T, H] = dropout(softmax(QKᵀ/√d
 * + mask))·V per head, heads merged back; dropout at `rate` with masks drawn from `seed` (rate 0:
 * none). Saves only the probabilities [B, A, T, T]; the dropout masks are redrawn backward.
 */
export function attentionFused(q: tf.Tensor3D, k: tf.Tensor3D, v: tf.Tensor3D, maskAdd: tf.Tensor2D, heads: number, rate: number, seed: number): tf.Tensor3D {
  for (const t of [q, k, v, maskAdd]) expectDtype('attention', t, 'float32')
  const [ctx, probs] = runFused(K.attention, {q, k, v, mask: maskAdd}, {heads, rate, seed}) as tf.Tensor[]
  probs.dispose()
  return ctx as tf.Tensor3D
}

/**
 * Inverted dropout: x · mask with mask = 1/(1−rate) with probability 1−rate, else 0, the mask
 * a function of `seed` and the position, so the gradient (dy · mask) redraws it. Natively a
 * counter-based generator (SplitMix64); elsewhere tf.dropout's (the masks differ between the
 * two, each as reproducible). Identity (a copy) at rate 0.
 */
export function dropoutFused(x: tf.Tensor, rate: number, seed: number): tf.Tensor {
  if (rate === 0) return x.clone()
  return runFused(K.dropout, {x}, {rate, seed}) as tf.Tensor
}

/** Σ x² over every tensor (the squared global norm) as a float32 scalar tensor, one kernel call. */
export function sumSquaresTensor(ts: tf.Tensor[]): tf.Scalar {
  for (const t of ts) expectDtype('sumSquares', t, 'float32')
  return runFused(K.sumSquares, ts as unknown as tf.NamedTensorMap) as tf.Scalar
}

/** Σ x² over every tensor, read back to the host. */
export function sumSquaresFused(ts: tf.Tensor[]): number {
  const s = sumSquaresTensor(ts)
  const v = s.dataSync()[0]
  s.dispose()
  return v
}

export interface AdamWStep {
  lr: number
  beta1: number
  beta2: number
  eps: number
  /** decoupled weight decay for this parameter (0 for biases and LayerNorm) */
  weightDecay: number
  /** 1 − β1ᵗ and 1 − β2ᵗ */
  bc1: number
  bc2: number
  /** factor on the gradient (global-norm clipping), 1 for none */
  gradScale: number
}

/**
 * One AdamW update of a parameter and its moments (the formula of src/core/train/optim.ts and
 * torch.optim.AdamW) as one kernel call. The native kernel updates p, m and v in place when
 * nothing else can see their storage and returns them as they are; otherwise the new values
 * are assigned.
 */
export function adamwFused(p: tf.Variable, m: tf.Variable, v: tf.Variable, g: tf.Tensor, h: AdamWStep): void {
  const attrs = {...h} as unknown as tf.NamedAttrMap
  const out = runFused(K.adamw, {p, m, v, g}, attrs) as tf.Tensor[]
  ;[p, m, v].forEach((variable, i) => {
    if (out[i].dataId !== variable.dataId) variable.assign(out[i])
  })
  tf.dispose(out)
}
