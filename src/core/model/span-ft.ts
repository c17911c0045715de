/**
 * The hierarchical CNN of Span Fine-tuning (Bao et al. §3.2, eqs. 1–2; §4.1 settings): the
 * encoder's token vectors T are grouped by an n-gram segmentation into at most r spans of at
 * most l tokens (padded and truncated), then
 *   c_i = MaxPool_j ReLU(W₁ [t^i_j … t^i_{j+k−1}] + b₁)     (a Conv1d over the tokens of span i)
 *   s   = MaxPool_i ReLU(W₂ [c_i … c_{i+k−1}] + b₂)         (a Conv1d over the spans)
 * and s is concatenated with the [CLS] vector before the classifier (§3.2: s* = s ◇ t₁).
 * Both convolutions are Conv1d(H→H, kernel 3, padding 1): "the output size of the CNN layer is
 * the same as the hidden size of PrLM, and the kernel size is set to 3" (§4.1); the padding is
 * ours (the paper does not give it), so a one-token span or a one-span sentence still has an
 * output. Padding never counts: padded positions enter the convolutions as zeros (exactly what
 * the convolution's own zero padding does at a real edge) and are excluded from the max-pools;
 * an all-padding span or sentence pools to 0.
 * Parameters use PyTorch's Conv1d layout (weight [out, in, k], bias [out]) under `span_ft.*`;
 * they start as BERT's other new layers do, N(0, initializer_range) with zero bias.
 */
import * as tf from '@tensorflow/tfjs'
import {gatherRows} from '../engine/gather.js'
import {matMulNN} from '../engine/matmul.js'
import type {ParamSpec, ParamStore} from './params.js'

export const SPAN_FT_PREFIX = 'span_ft'
export const SPAN_FT_KERNEL = 3

/** The settings saved in config.json (`span_ft`): r and l of §4.1. */
export interface SpanFtConfig {
  max_spans: number
  max_span_tokens: number
}

/** The two convolutions' parameters. */
export function spanFtSpecs(hidden: number): ParamSpec[] {
  const k = SPAN_FT_KERNEL
  return ['token_conv', 'span_conv'].flatMap((n) => [
    {name: `${SPAN_FT_PREFIX}.${n}.weight`, shape: [hidden, hidden, k], init: 'normal' as const},
    {name: `${SPAN_FT_PREFIX}.${n}.bias`, shape: [hidden], init: 'zeros' as const},
  ])
}

/** Parameters the module adds: 2 × (3·H·H + H), plus the classifier's second H inputs (C·H). */
export function spanFtExtraParams(hidden: number, numLabels: number): {convs: number; classifier: number; total: number} {
  const convs = 2 * (SPAN_FT_KERNEL * hidden * hidden + hidden)
  const classifier = numLabels * hidden
  return {convs, classifier, total: convs + classifier}
}

/**
 * Where each span's tokens are, on the host: for batch row b, span i, slot j, the flat position
 * b·T + t of its token in the encoder output (0 for padding), and a 1/0 mask.
 */
export interface SpanIndex {
  r: number
  l: number
  positions: Int32Array // [B·r·l]
  mask: Float32Array // [B·r·l]
}

/**
 * Conv1d with PyTorch's layout and semantics (cross-correlation, stride 1, zero padding
 * (k−1)/2): x [N, W, Cin], weight [Cout, Cin, k], bias [Cout] → [N, W, Cout]. Written as
 * im2col + one matMul, because the wasm backend has no Conv2DBackpropFilter kernel.
 */
export function conv1dSame(x: tf.Tensor3D, weight: tf.Tensor, bias: tf.Tensor): tf.Tensor3D {
  return tf.tidy(() => {
    const [N, W, Cin] = x.shape
    const [Cout, , k] = weight.shape
    const half = (k - 1) / 2
    const padded = tf.pad(x, [[0, 0], [half, k - 1 - half], [0, 0]]) // [N, W+k−1, Cin]
    const taps = Array.from({length: k}, (_, j) => padded.slice([0, j, 0], [N, W, Cin])) // k × [N, W, Cin]
    const cols = tf.concat(taps, 2).reshape([N * W, k * Cin]) as tf.Tensor2D // [N·W, k·Cin], column j·Cin + c
    const w = weight.transpose([2, 1, 0]).reshape([k * Cin, Cout]) as tf.Tensor2D // [k·Cin, Cout], row j·Cin + c
    return matMulNN(cols, w).add(bias).reshape([N, W, Cout]) as tf.Tensor3D // [N, W, Cout]
  })
}

/**
 * Max over axis 1 of x [N, W, C] counting only positions with mask [N, W] = 1; rows with no
 * such position give 0. Padded positions are pushed to −1e9 before the max, so they never win
 * (and get no gradient) while any real position exists.
 */
export function maskedMaxPool(x: tf.Tensor3D, mask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const m = mask.expandDims(2) // [N, W, 1]
    const filled = x.mul(m).add(tf.scalar(1).sub(m).mul(-1e9)) // [N, W, C]
    const pooled = filled.max(1) // [N, C]
    const any = mask.max(1, true).greater(0).tile([1, x.shape[2]]) // [N, C] true when the row has a real position
    return tf.where(any, pooled, tf.zerosLike(pooled)) as tf.Tensor2D // [N, C]
  })
}

/** Conv1d → ReLU → masked max-pool: [N, W, H], mask [N, W] → [N, H]. */
function convReluPool(p: ParamStore, name: string, x: tf.Tensor3D, mask: tf.Tensor2D): tf.Tensor2D {
  const xz = x.mul(mask.expandDims(2)) as tf.Tensor3D // [N, W, H] padding enters as zeros
  const y = tf.relu(conv1dSame(xz, p.get(`${SPAN_FT_PREFIX}.${name}.weight`), p.get(`${SPAN_FT_PREFIX}.${name}.bias`))) // [N, W, H]
  return maskedMaxPool(y as tf.Tensor3D, mask) // [N, H]
}

/** The sentence vector s of §3.2 from the encoder output h [B, T, H] (call inside tf.tidy). */
export function spanFtForward(p: ParamStore, h: tf.Tensor3D, idx: SpanIndex): tf.Tensor2D {
  const [B, T, H] = h.shape
  const {r, l} = idx
  const hFlat = h.reshape([B * T, H]) as tf.Tensor2D // [B·T, H]
  const rows = gatherRows(hFlat, tf.tensor1d(idx.positions, 'int32')) // [B·r·l, H]
  const tokMask = tf.tensor2d(idx.mask, [B * r, l]) // [B·r, l]
  const spans = convReluPool(p, 'token_conv', rows.reshape([B * r, l, H]) as tf.Tensor3D, tokMask) // [B·r, H] c_i, eq. 1
  const spanMask = tokMask.max(1).reshape([B, r]) as tf.Tensor2D // [B, r] 1 for a span with a token
  return convReluPool(p, 'span_conv', spans.reshape([B, r, H]) as tf.Tensor3D, spanMask) // [B, H] s, eq. 2
}
