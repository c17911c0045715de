import * as tf from '@tensorflow/tfjs'
import {gatherRows, embeddingLookup} from '../engine/gather.js'
import {attentionFused, residualLayerNormFused} from '../engine/fused.js'
import type {BertConfig} from './config.js'
import {layerStep} from './inference.js'
import {type ForwardContext, dropout, layerNorm, linear} from './layers.js'
import {type ParamSpec, type ParamStore, embeddingSpec, layerNormSpecs, linearSpecs} from './params.js'

/** Word + learned absolute position + token type embeddings → LayerNorm → dropout (BERT §3). */
export class BertEmbeddings {
  static readonly prefix = 'bert.embeddings'

  static specs(c: BertConfig): ParamSpec[] {
    const p = BertEmbeddings.prefix
    return [
      embeddingSpec(`${p}.word_embeddings.weight`, c.vocab_size, c.hidden_size),
      embeddingSpec(`${p}.position_embeddings.weight`, c.max_position_embeddings, c.hidden_size),
      embeddingSpec(`${p}.token_type_embeddings.weight`, c.type_vocab_size, c.hidden_size),
      ...layerNormSpecs(`${p}.LayerNorm`, c.hidden_size),
    ]
  }

  constructor(private readonly p: ParamStore, private readonly c: BertConfig) {}

  forward(ids: tf.Tensor2D, segments: tf.Tensor2D, ctx: ForwardContext): tf.Tensor3D {
    const pre = BertEmbeddings.prefix
    const T = ids.shape[1]
    const words = embeddingLookup(this.p.get(`${pre}.word_embeddings.weight`) as tf.Tensor2D, ids) // [B, T, H]
    const positions = gatherRows(this.p.get(`${pre}.position_embeddings.weight`) as tf.Tensor2D, tf.range(0, T, 1, 'int32') as tf.Tensor1D) // [T, H]
    const types = embeddingLookup(this.p.get(`${pre}.token_type_embeddings.weight`) as tf.Tensor2D, segments) // [B, T, H]
    const sum = words.add(positions).add(types) // [B, T, H]
    const normed = layerNorm(this.p, `${pre}.LayerNorm`, sum, this.c.layer_norm_eps) // [B, T, H]
    return dropout(normed, this.c.hidden_dropout_prob, ctx) as tf.Tensor3D // [B, T, H]
  }
}

/** Multi-head scaled dot-product self-attention with an additive padding mask (BertSelfAttention). */
export class BertSelfAttention {
  static specs(c: BertConfig, prefix: string): ParamSpec[] {
    return ['query', 'key', 'value'].flatMap((n) => linearSpecs(`${prefix}.${n}`, c.hidden_size, c.hidden_size))
  }

  constructor(private readonly p: ParamStore, private readonly c: BertConfig, private readonly prefix: string) {}

  /**
   * x [B, T, H], maskAdd [B, 1, 1, T] (0 to attend, −10000 for padding) → [B, T, H]: the three
   * projections, then softmax(QKᵀ/√d + mask) with dropout, times V, as one fused kernel
   * (src/core/engine/fused.ts attentionFused) on every backend.
   */
  forward(x: tf.Tensor3D, maskAdd: tf.Tensor4D, ctx: ForwardContext): tf.Tensor3D {
    const [B, T] = x.shape
    const rate = ctx.training ? this.c.attention_probs_dropout_prob : 0
    if (rate > 0 && !ctx.rng) throw new Error('dropout while training needs a seeded generator')
    const seed = rate > 0 ? ctx.rng!.next() : 0 // one draw, as dropout() takes
    const [q, k, v] = ['query', 'key', 'value'].map((n) => linear(this.p, `${this.prefix}.${n}`, x) as tf.Tensor3D) // [B, T, H] each
    return attentionFused(q, k, v, maskAdd.reshape([B, T]) as tf.Tensor2D, this.c.num_attention_heads, rate, seed) // [B, T, H]
  }
}

/**
 * dense → dropout → residual → LayerNorm (BertSelfOutput and BertOutput: post-LN) as one fused op
 * (src/core/engine/fused.ts residualLayerNormFused); the dropout seed drawn as dropout() draws it.
 */
export function residualOutput(
  p: ParamStore, c: BertConfig, prefix: string, x: tf.Tensor, residual: tf.Tensor, ctx: ForwardContext,
): tf.Tensor3D {
  const rate = ctx.training ? c.hidden_dropout_prob : 0
  if (rate > 0 && !ctx.rng) throw new Error('dropout while training needs a seeded generator')
  const seed = rate > 0 ? ctx.rng!.next() : 0
  const [w, b] = [p.get(`${prefix}.dense.weight`) as tf.Tensor2D, p.get(`${prefix}.dense.bias`) as tf.Tensor1D] // [H, in], [H]
  const [g, beta] = [p.get(`${prefix}.LayerNorm.weight`) as tf.Tensor1D, p.get(`${prefix}.LayerNorm.bias`) as tf.Tensor1D] // [H]
  const x2 = x.reshape([-1, x.shape[x.shape.length - 1]]) as tf.Tensor2D // [N, in]
  const r2 = residual.reshape([-1, w.shape[0]]) as tf.Tensor2D // [N, H]
  const y = residualLayerNormFused(x2, w, b, r2, g, beta, {eps: c.layer_norm_eps, rate, seed}) // [N, H]
  return y.reshape(residual.shape) as tf.Tensor3D // [B, T, H]
}

/** One post-LN Transformer layer: attention block, then the GeLU feed-forward block (BertLayer). */
export class BertLayer {
  static specs(c: BertConfig, prefix: string): ParamSpec[] {
    return [
      ...BertSelfAttention.specs(c, `${prefix}.attention.self`),
      ...linearSpecs(`${prefix}.attention.output.dense`, c.hidden_size, c.hidden_size),
      ...layerNormSpecs(`${prefix}.attention.output.LayerNorm`, c.hidden_size),
      ...linearSpecs(`${prefix}.intermediate.dense`, c.hidden_size, c.intermediate_size),
      ...linearSpecs(`${prefix}.output.dense`, c.intermediate_size, c.hidden_size),
      ...layerNormSpecs(`${prefix}.output.LayerNorm`, c.hidden_size),
    ]
  }

  private readonly attention: BertSelfAttention

  constructor(private readonly p: ParamStore, private readonly c: BertConfig, private readonly prefix: string) {
    this.attention = new BertSelfAttention(p, c, `${prefix}.attention.self`)
  }

  forward(x: tf.Tensor3D, maskAdd: tf.Tensor4D, ctx: ForwardContext): tf.Tensor3D {
    const pre = this.prefix
    const attended = this.attention.forward(x, maskAdd, ctx) // [B, T, H]
    const a = residualOutput(this.p, this.c, `${pre}.attention.output`, attended, x, ctx) // [B, T, H]
    const inter = linear(this.p, `${pre}.intermediate.dense`, a, 'gelu') // [B, T, I]
    return residualOutput(this.p, this.c, `${pre}.output`, inter, a, ctx) // [B, T, H]
  }
}

/** Embeddings and the stack of layers: token ids → contextual vectors (BertModel without pooler). */
export class BertEncoder {
  static specs(c: BertConfig): ParamSpec[] {
    const layers = Array.from({length: c.num_hidden_layers}, (_, i) => BertLayer.specs(c, `bert.encoder.layer.${i}`))
    return [...BertEmbeddings.specs(c), ...layers.flat()]
  }

  private readonly embeddings: BertEmbeddings
  private readonly layers: BertLayer[]

  constructor(p: ParamStore, c: BertConfig) {
    this.embeddings = new BertEmbeddings(p, c)
    this.layers = Array.from({length: c.num_hidden_layers}, (_, i) => new BertLayer(p, c, `bert.encoder.layer.${i}`))
  }

  /** ids, segments [B, T] int32; mask [B, T] float (1 real, 0 padding) → [B, T, H] */
  forward(ids: tf.Tensor2D, segments: tf.Tensor2D, mask: tf.Tensor2D, ctx: ForwardContext): tf.Tensor3D {
    const [B, T] = ids.shape
    const maskAdd = tf.scalar(1).sub(mask).mul(-10000).reshape([B, 1, 1, T]) as tf.Tensor4D // [B, 1, 1, T]
    let h = layerStep(ids, (x) => this.embeddings.forward(x, segments, ctx), false) // [B, T, H]
    for (const layer of this.layers) h = layerStep(h, (x) => layer.forward(x, maskAdd, ctx), true) // [B, T, H]; without a tape, each layer's activations freed as it ends
    return h
  }
}

/** tanh(dense(h[CLS])) (BertPooler), the input of NSP. */
export class BertPooler {
  static readonly prefix = 'bert.pooler.dense'

  static specs(c: BertConfig): ParamSpec[] {
    return linearSpecs(BertPooler.prefix, c.hidden_size, c.hidden_size)
  }

  constructor(private readonly p: ParamStore) {}

  /** h [B, T, H] → [B, H] */
  forward(h: tf.Tensor3D): tf.Tensor2D {
    const [B, T, H] = h.shape
    const firstRows = tf.range(0, B * T, T, 'int32') as tf.Tensor1D // [B]
    const cls = gatherRows(h.reshape([B * T, H]) as tf.Tensor2D, firstRows) // [B, H]
    return tf.tanh(linear(this.p, BertPooler.prefix, cls)) as tf.Tensor2D // [B, H]
  }
}
