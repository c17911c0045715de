import * as tf from '@tensorflow/tfjs'
import {gatherRows} from '../engine/gather.js'
import type {BertConfig} from './config.js'
import {dense, layerNorm, linear} from './layers.js'
import {type ParamSpec, type ParamStore, embeddingSpec, layerNormSpecs, linearSpecs} from './params.js'

export const WORD_EMBEDDINGS = 'bert.embeddings.word_embeddings.weight'

/**
 * The tied decoders' weight, shared by the MLM and SBO heads: the word embeddings [V, H] as
 * they are, in nn.Linear's [out, in] layout that the fused linear kernel takes on every backend.
 */
export type DecoderWeight = {layout: 'out-in'; w: tf.Tensor2D}

export function decoderWeight(p: ParamStore): DecoderWeight {
  return {layout: 'out-in', w: p.get(WORD_EMBEDDINGS) as tf.Tensor2D} // [V, H]
}

/** Output layer tied to the word embeddings (Press & Wolf), with its own bias: x [N, H] → [N, V]. */
function tiedDecoder(p: ParamStore, biasName: string, x: tf.Tensor2D, dec: DecoderWeight): tf.Tensor2D {
  const bias = p.get(biasName) as tf.Tensor1D // [V]
  return dense(x, dec.w, bias) // [N, H]·[V, H]ᵀ → [N, V]
}

/**
 * Masked LM head (BertLMPredictionHead): dense H→H, GeLU, LayerNorm, then the tied decoder
 * with `cls.predictions.bias`. Hugging Face's `cls.predictions.decoder.weight` is the word
 * embedding matrix itself and is not stored.
 */
export class MlmHead {
  static specs(c: BertConfig): ParamSpec[] {
    return [
      ...linearSpecs('cls.predictions.transform.dense', c.hidden_size, c.hidden_size),
      ...layerNormSpecs('cls.predictions.transform.LayerNorm', c.hidden_size),
      {name: 'cls.predictions.bias', shape: [c.vocab_size], init: 'zeros'},
    ]
  }

  constructor(private readonly p: ParamStore, private readonly c: BertConfig) {}

  static readonly bias = 'cls.predictions.bias'

  /** hFlat [B·T, H], positions [N] flat, dec (decoderWeight) → logits [N, V] */
  forward(hFlat: tf.Tensor2D, positions: tf.Tensor1D, dec: DecoderWeight): tf.Tensor2D {
    return tiedDecoder(this.p, MlmHead.bias, this.hidden(hFlat, positions), dec) // [N, V]
  }

  /** What the decoder reads: hFlat [B·T, H], positions [N] → [N, H] (dense, GeLU, LayerNorm). */
  hidden(hFlat: tf.Tensor2D, positions: tf.Tensor1D): tf.Tensor2D {
    const x = gatherRows(hFlat, positions) // [N, H]
    const t = linear(this.p, 'cls.predictions.transform.dense', x, 'gelu') // [N, H]
    return layerNorm(this.p, 'cls.predictions.transform.LayerNorm', t, this.c.layer_norm_eps) as tf.Tensor2D // [N, H]
  }
}

/**
 * Span boundary objective head (SpanBERT §3.2; reference `BertPairTargetPredictionHead` in
 * pretraining/fairseq/models/pair_bert.py): target i of span (s, e) is predicted from
 * [h(s−1); h(e+1); p(i−s)] through MLPWithLayerNorm (Linear(2H+P→H), GeLU, LayerNorm,
 * Linear(H→H), GeLU, LayerNorm) and a decoder that shares the word embeddings but has its
 * own bias. Names follow the reference module (`cls.pair_target_predictions.*`).
 */
export class SboHead {
  static readonly prefix = 'cls.pair_target_predictions'

  static specs(c: BertConfig): ParamSpec[] {
    const p = SboHead.prefix
    const P = c.sbo.position_embedding_size
    return [
      embeddingSpec(`${p}.position_embeddings.weight`, c.sbo.max_targets, P),
      ...linearSpecs(`${p}.mlp_layer_norm.linear1`, 2 * c.hidden_size + P, c.hidden_size),
      ...layerNormSpecs(`${p}.mlp_layer_norm.layer_norm1`, c.hidden_size),
      ...linearSpecs(`${p}.mlp_layer_norm.linear2`, c.hidden_size, c.hidden_size),
      ...layerNormSpecs(`${p}.mlp_layer_norm.layer_norm2`, c.hidden_size),
      {name: `${p}.bias`, shape: [c.vocab_size], init: 'zeros'},
    ]
  }

  constructor(private readonly p: ParamStore, private readonly c: BertConfig) {}

  static readonly bias = `${SboHead.prefix}.bias`

  /** hFlat [B·T, H]; left, right, rel [N]; dec (decoderWeight) → logits [N, V] */
  forward(hFlat: tf.Tensor2D, left: tf.Tensor1D, right: tf.Tensor1D, rel: tf.Tensor1D, dec: DecoderWeight): tf.Tensor2D {
    return tiedDecoder(this.p, SboHead.bias, this.hidden(hFlat, left, right, rel), dec) // [N, V]
  }

  /** What the decoder reads: hFlat [B·T, H]; left, right, rel [N] → [N, H] (MLPWithLayerNorm). */
  hidden(hFlat: tf.Tensor2D, left: tf.Tensor1D, right: tf.Tensor1D, rel: tf.Tensor1D): tf.Tensor2D {
    const pre = SboHead.prefix
    const eps = this.c.layer_norm_eps
    const hl = gatherRows(hFlat, left) // [N, H]
    const hr = gatherRows(hFlat, right) // [N, H]
    const pos = gatherRows(this.p.get(`${pre}.position_embeddings.weight`) as tf.Tensor2D, rel) // [N, P]
    const x = tf.concat([hl, hr, pos], 1) // [N, 2H+P]
    const a = layerNorm(this.p, `${pre}.mlp_layer_norm.layer_norm1`, linear(this.p, `${pre}.mlp_layer_norm.linear1`, x, 'gelu'), eps) // [N, H]
    return layerNorm(this.p, `${pre}.mlp_layer_norm.layer_norm2`, linear(this.p, `${pre}.mlp_layer_norm.linear2`, a, 'gelu'), eps) as tf.Tensor2D // [N, H]
  }
}

/** Next sentence prediction on the pooled [CLS] vector (BERT §3.1 task #2): [B, H] → [B, 2]. */
export class NspHead {
  static specs(c: BertConfig): ParamSpec[] {
    return linearSpecs('cls.seq_relationship', c.hidden_size, 2)
  }

  constructor(private readonly p: ParamStore) {}

  forward(pooled: tf.Tensor2D): tf.Tensor2D {
    return linear(this.p, 'cls.seq_relationship', pooled) as tf.Tensor2D // [B, 2]
  }
}
