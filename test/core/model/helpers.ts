import * as tf from '@tensorflow/tfjs'
import {Rng} from '../../../src/core/data/rng.js'
import type {MaskedExample} from '../../../src/core/model/batch.js'
import {presetConfig, type BertConfig} from '../../../src/core/model/config.js'

/** A small config for tests (sizes far below the presets so tests take milliseconds). */
export function smallConfig(overrides: Partial<BertConfig> = {}): BertConfig {
  return presetConfig('tiny', 40, {
    hidden_size: 16, num_attention_heads: 2, intermediate_size: 32, num_hidden_layers: 2,
    max_position_embeddings: 32, sbo: {position_embedding_size: 8, max_targets: 4}, ...overrides,
  })
}

/**
 * A masked example of n tokens ([CLS]=1 … [SEP]=2) with one span [s, e] masked to id 3;
 * other ids drawn from rng in [5, vocab).
 */
export function example(n: number, s: number, e: number, rng: Rng, vocab = 40): MaskedExample {
  const orig = Array.from({length: n}, (_, i) => (i === 0 ? 1 : i === n - 1 ? 2 : 5 + rng.int(vocab - 5)))
  const ids = orig.map((id, i) => (i >= s && i <= e ? 3 : id))
  const targets: [number, number][] = []
  for (let i = s; i <= e; i++) targets.push([i, orig[i]])
  return {ids, targets, spans: [[s, e, 'mask']]}
}

/** Runs f inside tf.tidy and returns its plain (non-tensor) result; every tensor it made is freed. */
export function tidyValues<T>(f: () => T): T {
  let out: T | undefined
  tf.tidy(() => {
    out = f()
  })
  return out as T
}
