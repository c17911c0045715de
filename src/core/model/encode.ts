import * as tf from '@tensorflow/tfjs'
import {UsageError} from '../stream/errors.js'
import {BertEmbeddings, BertLayer} from './bert.js'
import type {BertConfig} from './config.js'
import {layerStep} from './inference.js'
import {EVAL} from './layers.js'
import type {ParamStore} from './params.js'
import {maxOf} from '../util/arrays.js'

/** How `span encode` turns per-token states into output. */
export type Pooling = 'none' | 'cls' | 'mean'

/**
 * Parses `-1,-2,-3,-4` (Hugging Face's hidden_states numbering: 0 is the embedding output,
 * L the last layer, negatives count from the end). BERT §5.3 concatenates the last four.
 */
export function parseLayers(text: string, numLayers: number): number[] {
  const parts = text.split(',').map((s) => s.trim())
  if (parts.some((s) => s === '') && text.trim() !== '') throw new UsageError(`--layers ${JSON.stringify(text)}: an empty item (a stray comma?); give layers such as -1,-2,-3,-4`)
  const out = parts.filter((s) => s !== '').map((s) => {
    const k = /^[+-]?\d+$/.test(s) ? Number(s) : NaN
    if (!Number.isInteger(k) || k < -(numLayers + 1) || k > numLayers) {
      throw new UsageError(`--layers: "${s}" is not a layer of this ${numLayers}-layer model (0 … ${numLayers}, or -1 … -${numLayers + 1})`)
    }
    return k < 0 ? numLayers + 1 + k : k
  })
  if (out.length === 0) throw new UsageError('--layers: give at least one layer, such as -1')
  return out
}

/**
 * The encoder's hidden states, dropout off, the chosen ones concatenated per token:
 * ids, segments [B, T] int32, mask [B, T] float → [B, T, H·k]. Runs the model engineer's
 * BertEmbeddings and BertLayer one by one (BertEncoder.forward returns only the last state),
 * freeing each layer's activations, and each state not asked for, as the next layer runs (inference.ts).
 */
export function hiddenStates(p: ParamStore, c: BertConfig, ids: tf.Tensor2D, segments: tf.Tensor2D, mask: tf.Tensor2D, layers: number[]): tf.Tensor3D {
  return tf.tidy(() => {
    const [B, T] = ids.shape
    const maskAdd = tf.scalar(1).sub(mask).mul(-10000).reshape([B, 1, 1, T]) as tf.Tensor4D // [B, 1, 1, T]
    const states = new Map<number, tf.Tensor3D>() // the states asked for, by number
    let h = layerStep(ids, (x) => new BertEmbeddings(p, c).forward(x, segments, EVAL), false) // [B, T, H]
    const deepest = maxOf(layers)
    for (let i = 0; i <= deepest; i++) {
      if (layers.includes(i)) states.set(i, h)
      if (i === deepest) break
      const layer = new BertLayer(p, c, `bert.encoder.layer.${i}`)
      h = layerStep(h, (x) => layer.forward(x, maskAdd, EVAL), !layers.includes(i)) // [B, T, H]; one layer's activations live at a time
    }
    const picked = layers.map((k) => states.get(k)!)
    return picked.length === 1 ? picked[0] : (tf.concat(picked, 2) as tf.Tensor3D) // [B, T, H·k]
  })
}

/** [B, T, D] → [B, D]: the [CLS] state, or the mean over real (non-padding) tokens. */
export function pool(h: tf.Tensor3D, mask: tf.Tensor2D, how: 'cls' | 'mean'): tf.Tensor2D {
  return tf.tidy(() => {
    const [B, , D] = h.shape
    if (how === 'cls') return h.slice([0, 0, 0], [B, 1, D]).reshape([B, D]) as tf.Tensor2D // [B, D]
    const m = mask.expandDims(2) // [B, T, 1]
    const sum = h.mul(m).sum(1) // [B, D]
    return sum.div(mask.sum(1, true).maximum(1)) as tf.Tensor2D // [B, D]
  })
}

/** A number with `digits` significant digits, as short as JSON allows (-0 as 0). */
export function fmt(x: number, digits: number): string {
  if (!Number.isFinite(x)) return 'null'
  const s = String(Number(x.toPrecision(digits)))
  return s === '-0' ? '0' : s
}

/** `[a,b,…]` of row i of a [N, D] host array. */
export function formatRow(data: Float32Array, offset: number, d: number, digits: number): string {
  const parts = new Array<string>(d)
  for (let j = 0; j < d; j++) parts[j] = fmt(data[offset + j], digits)
  return `[${parts.join(',')}]`
}
