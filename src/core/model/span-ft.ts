/**
 * The hierarchical CNN of Span Fine-tuning (Bao et al. §3.2, eqs. 1–2; docs/algorithms.md#span-fine-tuning):
 * the encoder's token vectors T are grouped by a segmentation into r spans of l token slots
 * (zero-filled past a span's end, cut at l; zero spans past the last one), then
 *   c_i = MaxPool_j ReLU(W₁ [t^i_j … t^i_{j+k−1}] + b₁)     (a Conv1d over the slots of span i)
 *   s   = MaxPool_i ReLU(W₂ [c_i … c_{i+k−1}] + b₂)         (a Conv1d over the r spans)
 * with kernel 3 and H channels (§4.1). As the reference computes it (BAORONGZHOU/span-fine-tuning
 * @bca4358, modeling.py ChunkLevelFeatureEncoderMultiCnn + CNN_conv1d): Conv1d padding 0, the
 * max-pool over every output position of the fixed r × l grid (zero slots and zero spans
 * included, so a zero window gives ReLU(b)), dropout after each pool. `padding: 1` and
 * `pool: 'masked'` (padded positions excluded from the max, an empty span or row pooling to 0)
 * were this module's earlier behaviour and remain for checkpoints saved with it.
 *
 * The token-level variant (§5.4, NER: "removing the pooling layer"; modeling.py
 * ChunkLevelFeatureEncoderNERCNN + NER_CNN) runs the first Conv1d (padding 1) → ReLU → dropout
 * over each span's slots and gives each token the output at its own slot (0 for a token in no
 * span). Parameters use PyTorch's Conv1d layout (weight [out, in, k], bias [out]) under
 * `span_ft.*`, initialised N(0, initializer_range) with zero bias like BERT's other new layers.
 */
import * as tf from '@tensorflow/tfjs'
import {gatherRows} from '../engine/gather.js'
import {matMulNN} from '../engine/matmul.js'
import {type ForwardContext, dropout} from './layers.js'
import type {ParamSpec, ParamStore} from './params.js'

export const SPAN_FT_PREFIX = 'span_ft'
export const SPAN_FT_KERNEL = 3

/** The settings saved in config.json (`span_ft`): r and l of §4.1 and how the CNN is computed. */
export interface SpanFtConfig {
  max_spans: number
  max_span_tokens: number
  /** Conv1d zero padding; absent in checkpoints saved before it existed: 1 */
  padding?: 0 | 1
  /** 'reference' max over every position; 'masked' (absent: checkpoints saved before) real ones only */
  pool?: 'reference' | 'masked'
  /** what the span vector is concatenated with: [CLS]'s raw vector, the pooler's output, nothing (absent: pooled) */
  cls?: 'raw' | 'pooled' | 'none'
  /** how spans are made: dictionary, shuffled dictionary lengths (training), none (CNN over the tokens) */
  segmentation?: 'dict' | 'random' | 'none'
  /** 'sentence' (GLUE: s) or 'token' (NER: a vector per token) */
  level?: 'sentence' | 'token'
}

/** A SpanFtConfig with every field resolved (absent fields: what older checkpoints were trained with). */
export type SpanFtSettings = Required<SpanFtConfig>

export function spanFtSettings(c: SpanFtConfig): SpanFtSettings {
  return {padding: 1, pool: 'masked', cls: 'pooled', segmentation: 'dict', level: 'sentence', ...c}
}

/** The convolutions' parameters: two for the sentence level, the first only for the token level. */
export function spanFtSpecs(hidden: number, level: 'sentence' | 'token' = 'sentence'): ParamSpec[] {
  const k = SPAN_FT_KERNEL
  const names = level === 'token' ? ['token_conv'] : ['token_conv', 'span_conv']
  return names.flatMap((n) => [
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
 * b·T + t of its token in the encoder output (0 for padding), and a 1/0 mask. For the token
 * level, `tokenSlot[b·T + t]` is the slot (b·r + i)·l + j holding token t, or B·r·l for none.
 */
export interface SpanIndex {
  r: number
  l: number
  positions: Int32Array // [B·r·l]
  mask: Float32Array // [B·r·l]
  tokenSlot?: Int32Array // [B·T]
}

/**
 * PyTorch's Conv1d (cross-correlation, stride 1, zero padding p on both sides): x [N, W, Cin],
 * weight [Cout, Cin, k], bias [Cout] → [N, W + 2p − k + 1, Cout]. Written as im2col + one
 * matMul, because the wasm backend has no Conv2DBackpropFilter kernel.
 */
export function conv1d(x: tf.Tensor3D, weight: tf.Tensor, bias: tf.Tensor, padding: number): tf.Tensor3D {
  return tf.tidy(() => {
    const [N, W, Cin] = x.shape
    const [Cout, , k] = weight.shape
    const Wout = W + 2 * padding - k + 1
    if (Wout < 1) throw new RangeError(`Conv1d: ${W} positions with padding ${padding} are fewer than the kernel ${k}`)
    const padded = padding ? tf.pad(x, [[0, 0], [padding, padding], [0, 0]]) : x // [N, W+2p, Cin]
    const taps = Array.from({length: k}, (_, j) => padded.slice([0, j, 0], [N, Wout, Cin])) // k × [N, Wout, Cin]
    const cols = tf.concat(taps, 2).reshape([N * Wout, k * Cin]) as tf.Tensor2D // [N·Wout, k·Cin], column j·Cin + c
    const w = weight.transpose([2, 1, 0]).reshape([k * Cin, Cout]) as tf.Tensor2D // [k·Cin, Cout], row j·Cin + c
    return matMulNN(cols, w).add(bias).reshape([N, Wout, Cout]) as tf.Tensor3D // [N, Wout, Cout]
  })
}

/** Conv1d with padding (k−1)/2: as many outputs as inputs. */
export function conv1dSame(x: tf.Tensor3D, weight: tf.Tensor, bias: tf.Tensor): tf.Tensor3D {
  return conv1d(x, weight, bias, ((weight.shape[2] as number) - 1) / 2)
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

function convOf(p: ParamStore, name: string, x: tf.Tensor3D, padding: number): tf.Tensor3D {
  return tf.relu(conv1d(x, p.get(`${SPAN_FT_PREFIX}.${name}.weight`), p.get(`${SPAN_FT_PREFIX}.${name}.bias`), padding)) as tf.Tensor3D
}

/**
 * Conv1d → ReLU → max-pool → dropout: [N, W, H] (zeros at padding), mask [N, W] → [N, H]
 * (modeling.py CNN_conv1d.forward). The masked pool needs as many outputs as inputs (padding 1).
 */
function convReluPool(p: ParamStore, name: string, x: tf.Tensor3D, mask: tf.Tensor2D, s: SpanFtSettings, rate: number, ctx: ForwardContext): tf.Tensor2D {
  if (s.pool === 'masked' && s.padding !== 1) throw new Error('the masked span pool needs Conv1d padding 1')
  const y = convOf(p, name, x, s.padding) // [N, W', H]
  const pooled = s.pool === 'masked' ? maskedMaxPool(y, mask) : (y.max(1) as tf.Tensor2D) // [N, H]
  return dropout(pooled, rate, ctx) as tf.Tensor2D
}

/** The span slots [B·r, l, H] (zeros at padding) and their mask [B·r, l]. */
function spanSlots(h: tf.Tensor3D, idx: SpanIndex): {slots: tf.Tensor3D; mask: tf.Tensor2D} {
  const [B, T, H] = h.shape
  const {r, l} = idx
  const rows = gatherRows(h.reshape([B * T, H]) as tf.Tensor2D, tf.tensor1d(idx.positions, 'int32')) // [B·r·l, H]
  const mask = tf.tensor2d(idx.mask, [B * r, l]) // [B·r, l]
  return {slots: rows.reshape([B * r, l, H]).mul(mask.expandDims(2)) as tf.Tensor3D, mask} // zeros at padding
}

/** The sentence vector s of §3.2 from the encoder output h [B, T, H] (call inside tf.tidy). */
export function spanFtForward(p: ParamStore, h: tf.Tensor3D, idx: SpanIndex, sf: SpanFtConfig, rate = 0, ctx: ForwardContext = {training: false, rng: null}): tf.Tensor2D {
  const s = spanFtSettings(sf)
  const [B, , H] = h.shape
  const {slots, mask} = spanSlots(h, idx)
  if (s.segmentation === 'none') return noSegmentation(p, slots.reshape([B, idx.r * idx.l, H]) as tf.Tensor3D, s, rate, ctx)
  const spans = convReluPool(p, 'token_conv', slots, mask, s, rate, ctx) // [B·r, H] c_i, eq. 1
  const spanMask = mask.max(1).reshape([B, idx.r]) as tf.Tensor2D // [B, r] 1 for a span with a token
  return convReluPool(p, 'span_conv', spans.reshape([B, idx.r, H]) as tf.Tensor3D, spanMask, s, rate, ctx) // [B, H] s, eq. 2
}

/**
 * The "+ CNN" ablation (§5.1): two Conv1d layers straight over the token vectors (one span of
 * every token, zero-filled to its fixed width), then one max-pool: [B, W, H] → [B, H].
 */
function noSegmentation(p: ParamStore, x: tf.Tensor3D, s: SpanFtSettings, rate: number, ctx: ForwardContext): tf.Tensor2D {
  const y = convOf(p, 'span_conv', convOf(p, 'token_conv', x, s.padding), s.padding) // [B, W'', H]
  return dropout(y.max(1), rate, ctx) as tf.Tensor2D // [B, H]
}

/** The token-level variant (§5.4): one vector per token [B·T, H] (call inside tf.tidy). */
export function spanFtTokenForward(p: ParamStore, h: tf.Tensor3D, idx: SpanIndex, rate = 0, ctx: ForwardContext = {training: false, rng: null}): tf.Tensor2D {
  const [B, T, H] = h.shape
  if (!idx.tokenSlot) throw new Error('the token-level span CNN needs the batch\'s token slots')
  const {slots} = spanSlots(h, idx)
  const y = dropout(convOf(p, 'token_conv', slots, 1), rate, ctx) // [B·r, l, H] (NER_CNN: padding 1, no pool)
  const table = tf.concat([y.reshape([B * idx.r * idx.l, H]), tf.zeros([1, H])], 0) as tf.Tensor2D // [B·r·l + 1, H], last row 0
  return gatherRows(table, tf.tensor1d(idx.tokenSlot, 'int32')).reshape([B * T, H]) as tf.Tensor2D // [B·T, H]
}
