import * as tf from '@tensorflow/tfjs'
import type {KernelArgs} from './kernel-util.js'

/**
 * The composite formula of each fused kernel (fused-kernels.ts), written with tfjs ops: what
 * a backend without its own implementation runs (wasm, cpu with the native kernels off,
 * tensorflow). tfjs hands a kernel the op's tensors themselves and records no tape while a
 * kernel runs, so each is plain forward arithmetic; the backward kernels spell out the
 * gradients. Products never ask the kernel to transpose an operand (the wasm backend's
 * BatchMatMul is 7–10× slower with transposeA/transposeB; an explicit transpose is cheap).
 */
export type CompositeKernel = (args: KernelArgs) => tf.Tensor | tf.Tensor[]

const T = (t: tf.TensorInfo | undefined): tf.Tensor => t as tf.Tensor

/** The last two axes swapped: [..., M, N] → [..., N, M]. */
function swapLast(t: tf.Tensor): tf.Tensor {
  const perm = t.shape.map((_, i) => i)
  const r = perm.length
  ;[perm[r - 2], perm[r - 1]] = [perm[r - 1], perm[r - 2]]
  return t.transpose(perm)
}

/** GeLU, erf form (BERT modeling.py `gelu`): z · ½(1 + erf(z/√2)). */
const geluOf = (z: tf.Tensor): tf.Tensor => z.mul(tf.erf(z.mul(Math.SQRT1_2)).add(1).mul(0.5))

/** d gelu / dz = Φ(z) + z·φ(z). */
const geluDerivative = (z: tf.Tensor): tf.Tensor =>
  tf
    .erf(z.mul(Math.SQRT1_2))
    .add(1)
    .mul(0.5)
    .add(z.mul(tf.exp(z.square().mul(-0.5))).mul(1 / Math.sqrt(2 * Math.PI)))

/** [y, z]: z = x·Wᵀ + b [N, out], y = act(z); z kept only for GeLU (else [0]). */
const linear: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const z = tf.matMul(T(inputs.x), T(inputs.w).transpose()).add(T(inputs.b)) // [N, in]·[in, out] → [N, out]
    return attrs?.activation === 'gelu' ? [geluOf(z), z] : [z, tf.zeros([0])]
  })

/** [dx, dw, db]: dz = dy (· gelu′(z)); dx = dz·W, dW = dzᵀ·x, db = Σ_N dz. */
const linearGrad: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const dy = T(inputs.dy) // [N, out]
    const dz = attrs?.activation === 'gelu' ? dy.mul(geluDerivative(T(inputs.z))) : dy // [N, out]
    return [tf.matMul(dz, T(inputs.w)), tf.matMul(dz.transpose(), T(inputs.x)), dz.sum(0)]
  })

/** [y, mean, rstd]: BertLayerNorm over the last axis, ε inside the square root; mean and rstd per row. */
const layerNorm: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const x = T(inputs.x) // [..., H]
    const {mean, variance} = tf.moments(x, -1, true) // [..., 1] each
    const rstd = tf.rsqrt(variance.add(Number(attrs?.eps)))
    const y = x.sub(mean).mul(rstd).mul(T(inputs.g)).add(T(inputs.b)) // [..., H]
    return [y, mean.reshape([-1]), rstd.reshape([-1])]
  })

/** [dx, dg, db]: x̂ = (x − μ)·r, dx = r·(dx̂ − mean(dx̂) − x̂·mean(dx̂·x̂)) with dx̂ = dy·g. */
const layerNormGrad: CompositeKernel = ({inputs}) =>
  tf.tidy(() => {
    const x = T(inputs.x)
    const H = x.shape[x.rank - 1]
    const rows = [...x.shape.slice(0, -1), 1]
    const [dy, g] = [T(inputs.dy), T(inputs.g)]
    const r = T(inputs.rstd).reshape(rows) // [..., 1]
    const xhat = x.sub(T(inputs.mean).reshape(rows)).mul(r) // [..., H]
    const flat = (t: tf.Tensor) => t.reshape([-1, H])
    const dxhat = dy.mul(g)
    const dx = r.mul(dxhat.sub(dxhat.mean(-1, true)).sub(xhat.mul(dxhat.mul(xhat).mean(-1, true))))
    return [dx, flat(dy.mul(xhat)).sum(0), flat(dy).sum(0)]
  })

/** [Σ_n lse_n − logits[n, label_n], lse [N]]. */
const crossEntropy: CompositeKernel = ({inputs}) =>
  tf.tidy(() => {
    const logits = T(inputs.logits) // [N, C]
    const [N, C] = logits.shape
    const lse = tf.logSumExp(logits, -1) // [N]
    const flat = tf.range(0, N * C, C, 'int32').add(T(inputs.labels)) // [N]
    const picked = tf.gather(logits.reshape([N * C]), flat) // [N]
    return [lse.sum().sub(picked.sum()), lse]
  })

/** dlogits = dy · (softmax(logits) − onehot(labels)). */
const crossEntropyGrad: CompositeKernel = ({inputs}) =>
  tf.tidy(() => {
    const logits = T(inputs.logits) // [N, C]
    const C = logits.shape[1]!
    const onehot = tf.equal(tf.range(0, C, 1, 'int32').expandDims(0), T(inputs.labels).expandDims(1)).toFloat() // [N, C]
    return tf
      .exp(logits.sub(T(inputs.lse).expandDims(1)))
      .sub(onehot)
      .mul(T(inputs.dy))
  })

/** Per-head views of [B, T, H] tensors, and the attention's sizes and dropout. */
function attentionParts(inputs: KernelArgs['inputs'], attrs: KernelArgs['attrs']) {
  const [B, Tn, H] = inputs.q!.shape as [number, number, number]
  const A = Number(attrs?.heads)
  const d = H / A
  const rate = Number(attrs?.rate ?? 0)
  const seed = Number(attrs?.seed ?? 0)
  const split = (t: tf.Tensor, perm: number[]) => t.reshape([B, Tn, A, d]).transpose(perm) // [B, A, ·, ·]
  const merge = (t: tf.Tensor) => t.transpose([0, 2, 1, 3]).reshape([B, Tn, H]) // [B, A, T, d] → [B, T, H]
  const drop = (t: tf.Tensor) => (rate > 0 ? tf.dropout(t, rate, undefined, seed) : t)
  return {B, Tn, scale: 1 / Math.sqrt(d), split, merge, drop}
}

/** [ctx, probs]: probs = softmax(QKᵀ/√d + mask) [B, A, T, T], ctx = dropout(probs)·V, heads merged [B, T, H]. */
const attention: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const {B, Tn, scale, split, merge, drop} = attentionParts(inputs, attrs)
    const q = split(T(inputs.q), [0, 2, 1, 3]) // [B, A, T, d]
    const kT = split(T(inputs.k), [0, 2, 3, 1]) // [B, A, d, T]
    const v = split(T(inputs.v), [0, 2, 1, 3]) // [B, A, T, d]
    const scores = tf
      .matMul(q, kT)
      .mul(scale)
      .add(T(inputs.mask).reshape([B, 1, 1, Tn])) // [B, A, T, T]
    const probs = tf.softmax(scores, -1)
    return [merge(tf.matMul(drop(probs), v)), probs]
  })

/**
 * The probabilities [B, A, T, T] a SpanAttention saved: probs itself, or (a backend's flash kernel:
 * native-flash.ts, cuda) recomputed from the row log-sum-exp lse [B, A, T] as exp(QKᵀ·scale + mask − lse).
 */
function savedProbs(inputs: KernelArgs['inputs'], q: tf.Tensor, k: tf.Tensor, scale: number): tf.Tensor {
  const saved = T(inputs.probs)
  if (saved.rank === 4) return saved
  const [B, , Tn] = saved.shape
  const scores = tf
    .matMul(q, swapLast(k))
    .mul(scale)
    .add(T(inputs.mask).reshape([B, 1, 1, Tn])) // [B, A, T, T]
  return scores.sub(saved.expandDims(3)).exp()
}

/** [dq, dk, dv] from dy [B, T, H] and the saved probabilities (or lse); the dropout mask redrawn from its seed. */
const attentionGrad: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const {scale, split, merge, drop} = attentionParts(inputs, attrs)
    const [q, k, v] = [T(inputs.q), T(inputs.k), T(inputs.v)].map((t) => split(t, [0, 2, 1, 3])) // [B, A, T, d]
    const probs = savedProbs(inputs, q, k, scale) // [B, A, T, T]
    const dctx = split(T(inputs.dy), [0, 2, 1, 3]) // [B, A, T, d]
    const dv = tf.matMul(swapLast(drop(probs)), dctx) // [B, A, T, d]
    const dprobs = drop(tf.matMul(dctx, swapLast(v))) // [B, A, T, T]: dropout's gradient is the same mask
    const dscores = probs.mul(dprobs.sub(dprobs.mul(probs).sum(-1, true))).mul(scale) // softmax backward
    return [merge(tf.matMul(dscores, k)), merge(tf.matMul(swapLast(dscores), q)), merge(dv)]
  })

/** tf.dropout(x, rate, seed): the same masks the model drew before the kernels existed. */
const dropout: CompositeKernel = ({inputs, attrs}) => tf.tidy(() => tf.dropout(T(inputs.x), Number(attrs?.rate), undefined, Number(attrs?.seed)).clone())

/** Σ x² over every input. */
const sumSquares: CompositeKernel = ({inputs}) =>
  tf.tidy(() => {
    const ts = Object.values(inputs).map(T)
    return ts.length === 0 ? tf.scalar(0) : tf.addN(ts.map((t) => t.square().sum()))
  })

/** The AdamW formula of src/core/train/optim.ts (torch.optim.AdamW): [p′, m′, v′]. */
const adamw: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const h = attrs as Record<string, number>
    const [p, m0, v0, g0] = [inputs.p, inputs.m, inputs.v, inputs.g].map(T)
    const g = h.gradScale === 1 ? g0 : g0.mul(h.gradScale)
    const m = m0.mul(h.beta1).add(g.mul(1 - h.beta1))
    const v = v0.mul(h.beta2).add(g.square().mul(1 - h.beta2))
    const decayed = h.weightDecay > 0 ? p.mul(1 - h.lr * h.weightDecay) : p
    const denom = v.div(h.bc2).sqrt().add(h.eps)
    return [decayed.sub(m.div(denom).mul(h.lr / h.bc1)), m, v]
  })

/** Another fused kernel, run by the backend at hand (its own implementation, else its composite). */
const kernel = (name: string, inputs: tf.NamedTensorMap, attrs: tf.NamedAttrMap = {}): tf.Tensor[] =>
  [tf.engine().runKernel(name, inputs, attrs) as tf.Tensor | tf.Tensor[]].flat()

/**
 * [y, s, mean, rstd]: y = LayerNorm(dropout(x·Wᵀ + b) + residual) (BertSelfOutput, BertOutput), s
 * the LayerNorm input [N, H]; as the chain of the other fused kernels the model called before this
 * one existed (SpanLinear, SpanDropout when rate > 0, an add, SpanLayerNorm), so every backend's
 * result is that chain's, bit for bit (native: its addon calls; cuda: residual_layernorm.cu).
 */
const residualLayerNorm: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const rate = Number(attrs?.rate ?? 0)
    const [z] = kernel('SpanLinear', {x: T(inputs.x), w: T(inputs.w), b: T(inputs.b)}, {activation: 'linear'}) // [N, H]
    const d = rate > 0 ? kernel('SpanDropout', {x: z}, {rate, seed: Number(attrs?.seed ?? 0)})[0] : z // [N, H]
    const s = d.add(T(inputs.residual)) // [N, H]
    const [y, mean, rstd] = kernel('SpanLayerNorm', {x: s, g: T(inputs.g), b: T(inputs.beta)}, {eps: Number(attrs?.eps)})
    return [y, s, mean, rstd]
  })

/** [dx, dw, db, dresidual, dg, dbeta] from dy and the saved x, w, g, s, mean, rstd: the chain's gradients, the dropout mask redrawn. */
const residualLayerNormGrad: CompositeKernel = ({inputs, attrs}) =>
  tf.tidy(() => {
    const rate = Number(attrs?.rate ?? 0)
    const ln = {dy: T(inputs.dy), x: T(inputs.s), g: T(inputs.g), mean: T(inputs.mean), rstd: T(inputs.rstd)}
    const [ds, dg, dbeta] = kernel('SpanLayerNormGrad', ln) // [N, H], [H], [H]
    const dz = rate > 0 ? kernel('SpanDropout', {x: ds}, {rate, seed: Number(attrs?.seed ?? 0)})[0] : ds // [N, H]
    const [dx, dw, db] = kernel('SpanLinearGrad', {dy: dz, x: T(inputs.x), w: T(inputs.w), z: tf.zeros([0])}, {activation: 'linear'})
    return [dx, dw, db, ds, dg, dbeta]
  })

/** The composite of each fused kernel, by kernel name. */
export const COMPOSITE_FUSED: Record<string, CompositeKernel> = {
  SpanLinear: linear,
  SpanLinearGrad: linearGrad,
  SpanLayerNorm: layerNorm,
  SpanLayerNormGrad: layerNormGrad,
  SpanCrossEntropy: crossEntropy,
  SpanCrossEntropyGrad: crossEntropyGrad,
  SpanAttention: attention,
  SpanAttentionGrad: attentionGrad,
  SpanDropout: dropout,
  SpanSumSquares: sumSquares,
  SpanAdamW: adamw,
  SpanResidualLayerNorm: residualLayerNorm,
  SpanResidualLayerNormGrad: residualLayerNormGrad,
}
